#!/usr/bin/env bash
# rdmanet's main job, end to end, on this machine: installs what is missing, builds, brings up a
# simulated two-socket RDMA node and shows what rdmanet sees of it.
#
#   hack/demo.sh [--quiet] [--keep]
#
# --quiet prints only the summary; --keep leaves the simulated node up for poking around
# (tear it down with `hack/simnode down --root /run/rdmanet-demo`).
set -euo pipefail
cd "$(dirname "$0")/.."

quiet=0 keep=0
for a in "$@"; do
  case $a in
    --quiet) quiet=1 ;;
    --keep) keep=1 ;;
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "demo: unknown option $a" >&2; exit 2 ;;
  esac
done

say() { ((quiet)) || printf '\n== %s\n' "$*"; }
show() { if ((quiet)); then "$@" >/dev/null; else "$@"; fi; }

root=/run/rdmanet-demo
declare -A result

say "1. Install dependencies and build"
show hack/install-deps.sh
if ((quiet)); then hack/build.sh >/dev/null; else hack/build.sh | tail -n 3; fi
result[build]=ok

cleanup() { ((keep)) || hack/simnode down --root "$root" >/dev/null 2>&1 || true; }
trap cleanup EXIT

say "2. Simulated node (this kernel has no SR-IOV/RDMA): default two-socket topology"
hack/simnode down --root "$root" >/dev/null 2>&1 || true
show hack/simnode up --root "$root"
result[simnode]=ok

say "3. Inventory: NICs, VFs, RDMA devices, GPUs, NUMA and PCIe distance"
show hack/simnode show --root "$root"
result[inventory]=ok

printf '\n%-12s %s\n' step result
for k in build simnode inventory; do printf '%-12s %s\n' "$k" "${result[$k]:-FAIL}"; done
