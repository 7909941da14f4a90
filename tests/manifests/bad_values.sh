#!/usr/bin/env bash
# The chart must refuse a bad values file, with a readable error that names the key:
#   bad_values.sh FILE
# FILE's `# expect: TEXT` lines each name text that helm's error must contain. Schema errors come
# from values.schema.json (checked before any template runs); errors relating two keys come from
# the chart's rdmanet.validate template.
source "$(dirname "$0")/lib.sh"
require_tools
f=${1:?usage: bad_values.sh FILE}
mapfile -t expects < <(sed -n 's/^# expect: //p' "$f")
((${#expects[@]})) || die "$f has no '# expect:' line"

if out=$("$helm" template rdmanet "$chart" -f "$f" 2>&1); then
  die "$(basename "$f") was accepted; expected: ${expects[*]}"
fi
for e in "${expects[@]}"; do
  grep -qF -- "$e" <<<"$out" || die "$(basename "$f"): error lacks '$e'; helm said:
$out"
done
# One mistake, one error: a bad file must not also trip unrelated checks.
n=$(grep -c '^- ' <<<"$out" || true)
((n <= ${#expects[@]})) || die "$(basename "$f"): $n errors for ${#expects[@]} expected:
$out"
if grep -q "^Error: values don't meet the specifications of the schema" <<<"$out"; then
  # A schema error: helm lint refuses it too. (Lint reports a template's `fail` only as INFO, so
  # cross-key errors are asserted through template alone; install runs the templates.)
  ! "$helm" lint "$chart" -f "$f" >/dev/null 2>&1 || die "helm lint accepted $(basename "$f")"
else
  grep -q '^Error: execution error at (rdmanet/templates/' <<<"$out" ||
    die "$(basename "$f"): neither a schema nor a chart check error: $out"
fi
echo "PASS: $(basename "$f"): ${expects[*]}"
