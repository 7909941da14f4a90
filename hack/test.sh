#!/usr/bin/env bash
# Builds rdmanet and runs every test label (unit, netns, integration, vm, cluster) on this
# machine. A fresh Debian 12 machine needs nothing else: dependencies are installed first.
# Arguments go to ctest (e.g. -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
build_dir=${BUILD_DIR:-build}
mkdir -p "$build_dir"
# The real cluster's upstream components (label cluster: Kubernetes, etcd, containerd, the CNI
# plugins, Multus) take tens of minutes to build cold. Their build starts now, niced, beside
# rdmanet's own and the other tests, instead of after them; cluster.build then waits for it
# (build.sh locks each component) or finds the cache warm. Only for a whole run: a run of
# chosen tests does not pay for it.
cluster_build=
if (($# == 0)); then
  # A session of its own, so that the whole build (go and its compilers) can be stopped.
  setsid hack/cluster/build.sh >"$build_dir/cluster-build.log" 2>&1 &
  cluster_build=$!
fi
# Whatever happens, no build is left running behind this script.
stop_cluster_build() {
  [[ -n $cluster_build ]] || return 0
  kill -TERM -- "-$cluster_build" 2>/dev/null || true
  wait "$cluster_build" 2>/dev/null || true
}
trap stop_cluster_build EXIT
hack/build.sh
# Tests that boot the VM or time the kernel are RUN_SERIAL in their CMakeLists; the rest share
# the two cores.
run_ctest() { ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 900 "$@"; }
if (($# == 0)); then
  # The cluster label last: the components' build has had the whole run to finish, and its
  # cluster.build test would otherwise hold one of the two slots while it waits for it.
  rc=0
  run_ctest -LE cluster || rc=$?
  run_ctest -L cluster || rc=$?
  exit "$rc"
fi
run_ctest "$@"
