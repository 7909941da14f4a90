#!/usr/bin/env bash
# `helm lint --strict` of the chart with its defaults and with each per-mode values file, and a
# `helm package` of it (what a chart repository would serve).
source "$(dirname "$0")/lib.sh"
require_tools
make_tmp

lint() {
  local what=$1
  shift
  if ! out=$("$helm" lint --strict "$chart" "$@" 2>&1); then
    echo "$out" >&2
    die "helm lint --strict failed with $what"
  fi
  grep -q '1 chart(s) linted, 0 chart(s) failed' <<<"$out" || die "unexpected lint output: $out"
  # --strict turns warnings into failures; an [ERROR] or [WARNING] line must not slip through.
  if grep -E '^\[(ERROR|WARNING)\]' <<<"$out"; then
    die "helm lint reported problems with $what"
  fi
  echo "lint ok: $what"
}

lint "default values"
n=0
for m in $(modes); do
  lint "values/$m.yaml" -f "$values_dir/$m.yaml"
  n=$((n + 1))
done
((n >= 3)) || die "expected a values file per mode (sriov, macvlan, host-device), found $n"

"$helm" package "$chart" --destination "$tmp" >/dev/null
version=$(sed -n 's/^version: *//p' "$chart/Chart.yaml")
pkg=$tmp/rdmanet-$version.tgz
[[ -s $pkg ]] || die "helm package did not produce $pkg"
# The packaged chart must carry the schema, or installs from a repository skip validation.
# (Output captured first: grep -q closing the pipe early would fail the pipeline on SIGPIPE.)
grep -qx 'rdmanet/values.schema.json' <<<"$(tar -tzf "$pkg")" || die "package lacks values.schema.json"
"$helm" template rdmanet "$pkg" >/dev/null || die "the packaged chart does not render"
echo "package ok: $(basename "$pkg")"
