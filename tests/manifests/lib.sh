# shellcheck shell=bash
# Sourced by the manifest tests. Finds the repo, the chart and the tools installed by
# hack/install-helm.sh, and gives each test its own temp dir.
#
# A missing helm or npm package is a failure, not a skip: hack/test.sh installs them first, so a
# skip would only hide a broken install step.

set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
chart=$repo/manifests/helm/rdmanet
values_dir=$repo/manifests/values
# shellcheck disable=SC2034 # read by the sourcing tests
examples_dir=$repo/manifests/examples
# shellcheck disable=SC2034
tests_dir=$repo/tests/manifests
tools=${RDMANET_TOOLS_DIR:-/opt/rdmanet-tools}
helm=$tools/bin/helm
node_modules=$tools/node/node_modules

# ctest's SKIP_RETURN_CODE for these tests.
readonly kSkip=77

die() {
  echo "FAIL: $*" >&2
  exit 1
}

skip() {
  echo "SKIP: $*"
  exit "$kSkip"
}

require_tools() {
  [[ -x $helm ]] || die "no helm at $helm: run hack/install-helm.sh (or hack/install-deps.sh)"
  [[ -d $node_modules/kubernetes-models ]] ||
    die "no kubernetes-models in $node_modules: run hack/install-helm.sh"
  command -v node >/dev/null || die "node is not on PATH"
  export NODE_PATH=$node_modules
}

# A temp dir removed on exit; kept when RDMANET_KEEP_TMP=1 to inspect renders.
make_tmp() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmanet-manifests.XXXXXX")
  if [[ ${RDMANET_KEEP_TMP:-0} == 1 ]]; then
    echo "keeping $tmp" >&2
  else
    trap 'rm -rf "$tmp"' EXIT
  fi
}

# The per-mode values files, by mode name (file stem).
modes() {
  local f
  for f in "$values_dir"/*.yaml; do
    basename "$f" .yaml
  done
}

# The `api` a per-mode values file sets (deviceplugin unless it says dra), for check_chart.js.
values_api() {
  local api
  api=$(sed -n 's/^api: *//p' "$1")
  echo "${api:-deviceplugin}"
}

# render OUT [helm args...]: helm template into OUT, with the release name and namespace
# the checks expect.
render() {
  local out=$1
  shift
  "$helm" template rdmanet "$chart" --namespace kube-system "$@" >"$out"
}
