#!/usr/bin/env bash
# Builds rdmanet and runs every test label (unit, netns, integration, vm, cluster) on this
# machine. A fresh Debian 12 machine needs nothing else: dependencies are installed first.
# Arguments go to ctest (e.g. -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
# Where the time went: each phase's wall seconds, as it ends and again last (CI keeps only the
# tail of a run, and a run it stops never reaches the last line).
phases=()
phase_start=$SECONDS
phase_done() {
  phases+=("$1 $((SECONDS - phase_start)) s")
  echo "test.sh: $1 took $((SECONDS - phase_start)) s (at $SECONDS s)" >&2
  phase_start=$SECONDS
}
hack/install-deps.sh
phase_done deps
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
on_exit() {
  stop_cluster_build
  local list
  printf -v list '%s, ' "${phases[@]}"
  echo "test.sh: ${list%, }; total $SECONDS s" >&2
}
trap on_exit EXIT
hack/build.sh
phase_done build
# Tests that boot the VM or time the kernel are RUN_SERIAL in their CMakeLists; the rest share
# the two cores.
run_ctest() { ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 900 "$@"; }
if (($# == 0)); then
  # The cluster label last: the components' build has had the whole run to finish, and its
  # cluster.build test would otherwise hold one of the two slots while it waits for it.
  rc=0
  run_ctest -LE cluster || rc=$?
  phase_done tests
  run_ctest -L cluster || rc=$?
  phase_done cluster
  exit "$rc"
fi
run_ctest "$@" || exit
phase_done tests
