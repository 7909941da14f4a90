# shellcheck shell=bash
# shellcheck disable=SC2034 # vfs, vf_pf and vf_numa are read by the sourcing tests
# Shared set-up of the device-plugin guest tests (tests/vm/dp_*.sh), sourced after `set -u`:
#
#   source "$(dirname "$0")/dp_lib.sh" NAME DEVICE_PLUGIN FAKE_KUBELET
#
# gives step() (progress lines with the elapsed time), dp_bin and kubelet_bin (absolute),
# DEMO_WORK (a scratch dir) with the stand-in kubelet's helpers (hack/demo/kubelet.sh), a cleanup
# trap that stops both and prints the tail of the plugin's log, and:
#   dp_vfs_collect   fills vfs (netdev names), vf_pf[PCI]=PF netdev and vf_numa[PCI]=NUMA node
#                    for every VF of the two PFs, leaving them as they are
#   dp_vfs_up        dp_vfs_collect, then every VF up and with carrier
#   dp_start POOLS [ARGS...]
#                    the stand-in kubelet, then the plugin on the guest's real /sys with the pools
#                    config POOLS (JSON) and ARGS; its log is $DEMO_WORK/dp.log
SECONDS=0
step() { echo "[${SECONDS}s] $*"; }
dp_bin=$(readlink -f "${2:?device plugin binary}")
kubelet_bin=$(readlink -f "${3:?fake kubelet binary}")
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
DEMO_WORK=$(mktemp -d "/tmp/${1:?test name}.XXXXXX")
# shellcheck source=hack/demo/kubelet.sh
source "$RDMANET_VM_DIR/../demo/kubelet.sh"

dp_pid=
_dp_finish() {
  kubelet_stop
  [[ -n $dp_pid ]] && kill "$dp_pid" 2>/dev/null && wait "$dp_pid"
  echo "--- device plugin log (tail)"
  tail -n 15 "$DEMO_WORK/dp.log"
}
trap _dp_finish EXIT

declare -A vf_pf vf_numa
vfs=()
dp_vfs_collect() {
  local n pf v id
  for n in 0 1; do
    pf=$(pf_of_numa "$n")
    for v in $(vfs_of "$pf"); do
      id=$(pci_of_netdev "$v")
      vfs+=("$v")
      vf_pf[$id]=$pf
      vf_numa[$id]=$n
    done
  done
}
dp_vfs_up() {
  local v
  dp_vfs_collect
  for v in "${vfs[@]}"; do ip link set "$v" up; done
  for v in "${vfs[@]}"; do wait_carrier "$v" 90 || t_fail "$v has no carrier"; done
  step "${#vfs[@]} VFs up with carrier"
}

dp_start() {
  local pools=$1
  shift
  printf '%s\n' "$pools" >"$DEMO_WORK/pools.json"
  mkdir -p "$DEMO_WORK/kubelet/device-plugins"
  kubelet_start "$kubelet_bin" "$DEMO_WORK/kubelet"
  "$dp_bin" --config "$DEMO_WORK/pools.json" --kubelet-dir "$DEMO_WORK/kubelet" --sysfs-root / \
    --devinfo-dir "$DEMO_WORK/devinfo" --metrics-addr off "$@" >"$DEMO_WORK/dp.log" 2>&1 &
  dp_pid=$!
}
