#!/usr/bin/env bash
# The demo's story, steps 2 to 8 (hack/demo.sh does step 1 and the summary): runs as root where
# the node is, inside the VM (through hack/vm/run.sh) or on this host with the simulated node.
#
#   hack/demo/story.sh vm|simnode
#
# Binaries (absolute paths) come in the environment, which hack/vm/run.sh passes into the guest:
# RDMANET_DEMO_BIN_CNI, _DP, _KUBELET, _DOCTOR, _SIMNODE; RDMANET_DEMO_REPO is the checkout.
# Each step's outcome goes to RDMANET_DEMO_RESULTS ("key<TAB>PASS|FAIL|N/A<TAB>detail" lines;
# default: $RDMANET_VM_OUT/results in the VM). Every command is the product's own binary or a
# standard tool; the story only orchestrates and shows.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
platform=${1:?usage: story.sh vm|simnode}
DEMO_WORK=$(mktemp -d /tmp/rdmanet-demo.XXXXXX)
DEMO_RESULTS=${RDMANET_DEMO_RESULTS:-${RDMANET_VM_OUT:+$RDMANET_VM_OUT/results}}
DEMO_RESULTS=${DEMO_RESULTS:-$DEMO_WORK/results}
# shellcheck source=hack/demo/lib.sh
source "$here/lib.sh"
# shellcheck source=hack/demo/platform_vm.sh
source "$here/platform_$platform.sh"
# shellcheck source=hack/demo/pods.sh
source "$here/pods.sh"

dp_pid=
# shellcheck disable=SC2317 # runs from the EXIT trap
cleanup() {
  kubelet_stop
  [[ -n $dp_pid ]] && kill "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null
  pods_cleanup
  [[ ${RDMANET_DEMO_KEEP:-0} == 1 ]] || plat_down
  rm -rf "$DEMO_WORK"
}
trap cleanup EXIT

# --- 2. the node --------------------------------------------------------------------------------
section "2. The node: $(plat_describe)"
if plat_up; then
  record node PASS "$platform"
else
  record node FAIL "$platform: setup failed"
  exit 1
fi

# --- 3. node doctor -----------------------------------------------------------------------------
section "3. Node doctor: the pre-training checklist and the NIC x GPU matrix"
doctor=(--expect-mtu 9000 --lossless-priority 3)
"$RDMANET_DEMO_BIN_DOCTOR" --sysfs-root "$plat_root" "${doctor[@]}" >"$DEMO_WORK/doctor.txt" 2>&1
doctor_rc=$?
printf '$ rdmanet-doctor --sysfs-root %s %s\n' "$plat_root" "${doctor[*]}"
# The matrix, then what is not PASS (one line each), then the verdict.
sed -n '1,/^$/p' "$DEMO_WORK/doctor.txt" | grep -v '^$' | sed 's/^/  /'
grep -E '^[a-z_]+ .* (WARN|FAIL|UNKNOWN) ' "$DEMO_WORK/doctor.txt" | head -n 8 | cut -c 1-130 |
  sed 's/^/  /'
tail -n 1 "$DEMO_WORK/doctor.txt" | sed 's/^/  /'
if [[ $platform == vm ]]; then
  say "the guest has no GPU, so its matrix has no GPU column. For the matrix, the same doctor on"
  say "the simulated node's tree (hack/simnode up --tree-only: the default topology, no links):"
  "$RDMANET_DEMO_BIN_SIMNODE" up --tree-only --root "$DEMO_WORK/simtree" >/dev/null 2>&1
  "$RDMANET_DEMO_BIN_DOCTOR" --sysfs-root "$DEMO_WORK/simtree" >"$DEMO_WORK/doctor-sim.txt" 2>&1
  printf '$ rdmanet-doctor --sysfs-root <simulated tree>   (matrix only)\n'
  sed -n '1,/^$/p' "$DEMO_WORK/doctor-sim.txt" | grep -v '^$' | sed 's/^/  /'
fi
checks=$(tail -n 1 "$DEMO_WORK/doctor.txt")
if ((doctor_rc == 0)); then record doctor PASS "$checks"; else record doctor FAIL "$checks"; fi

# --- 4. device plugin and kubelet ---------------------------------------------------------------
section "4. rdmanet-device-plugin with a pools config, registered with a stand-in kubelet"
kdir=$DEMO_WORK/kubelet
mkdir -p "$kdir/device-plugins" "$DEMO_WORK/devinfo"
plat_pools_json >"$DEMO_WORK/pools.json"
say "pools config ($DEMO_WORK/pools.json):"
jq -c '.resourceList[]' "$DEMO_WORK/pools.json" | sed 's/^/  /'
kubelet_start "$RDMANET_DEMO_BIN_KUBELET" "$kdir"
"$RDMANET_DEMO_BIN_DP" --config "$DEMO_WORK/pools.json" --kubelet-dir "$kdir" \
  --sysfs-root "$plat_root" --devinfo-dir "$DEMO_WORK/devinfo/dp" --metrics-addr off \
  >"$DEMO_WORK/dp.log" 2>&1 &
dp_pid=$!
printf '$ rdmanet-device-plugin --config pools.json --kubelet-dir %s --sysfs-root %s ...\n' \
  "$kdir" "$plat_root"
if KUBELET_TIMEOUT=120 kubelet wait rdma/vf 120000 && kubelet options rdma/vf; then
  say "kubelet's view (Register, GetDevicePluginOptions, ListAndWatch):"
  kubelet_last register | jq -r '"  Register: resource \(.resource) endpoint \(.endpoint) version \(.version) accepted \(.accepted)"'
  kubelet_last options | jq -r '"  options: GetPreferredAllocation available: \(.get_preferred_allocation_available)"'
  kubelet_table rdma/vf | sed 's/^/  /'
  dev=$(kubelet_last devices rdma/vf)
  n=$(jq '.count' <<<"$dev")
  h=$(jq '.healthy' <<<"$dev")
  numas=$(jq -r '[.devices[].numa[]] | unique | map(tostring) | join(",")' <<<"$dev")
  detail="$n devices, $h healthy, NUMA $numas"
  if ((n > 0 && h == n)) && [[ $numas == 0,1 ]]; then
    record device-plugin PASS "$detail"
  else
    record device-plugin FAIL "$detail"
  fi
else
  tail -n 5 "$DEMO_WORK/dp.log"
  record device-plugin FAIL "no registration or device list"
fi
grep -E ' [IW] \[(discovery|kubelet)\]' "$DEMO_WORK/dp.log" | head -n 4 | cut -c 12- |
  sed 's/^/  dp log: /'

snapshot_before=$(plat_vf_snapshot)

# --- 5-6. pods --------------------------------------------------------------------------------------
section "5. Two training pods, on NUMA 0 and NUMA 1"
schedule_pod a 0 10.56.0.1/24
schedule_pod b 1 10.56.0.2/24

section "6. Does it work? Jumbo ping, the lossless PCP on the wire, the PF's VF table"
show_it_works

section "6b. RDMA traffic carries the lossless priority: ib_write_bw between the pods"
rdma_traffic

# --- 7. health ------------------------------------------------------------------------------------
section "7. A link goes down: kubelet sees Unhealthy devices, then Healthy again"
health_flip

# --- 8. teardown ----------------------------------------------------------------------------------
section "8. The pods go away (CNI DEL): every VF back as it was"
delete_pods "$snapshot_before"
if [[ ${RDMANET_DEMO_KEEP:-0} == 1 ]]; then
  section "--keep: $(plat_keep_note)"
  plat_keep
fi
exit 0
