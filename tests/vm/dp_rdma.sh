#!/usr/bin/env bash
# vm test: the device plugin and RDMA devices on a real kernel. Soft-RoCE (rxe) on igb VFs is an
# RDMA device with no PCI link of its own (/sys/devices/virtual/infiniband/rxeN): the plugin,
# reading the guest's real /sys (--sysfs-root /), must tie each rxe to its VF through `parent`,
# offer exactly the VFs that have one in an isRdma pool, with each PF's NUMA node, and answer
# Allocate (through the stand-in kubelet) with that rxe's own uverbs node and its name in the
# NCCL and PCIDEVICE_*_INFO hints; a VF whose netdev (and so its rxe) went into a pod stays
# offered, and leaves the pool once it is back without an rxe.
#
#   dp_rdma.sh DEVICE_PLUGIN FAKE_KUBELET
set -u
# shellcheck source=tests/vm/dp_lib.sh
source "$(dirname "$0")/dp_lib.sh" dp-rdma "$@"

# Every VF up (a device is Healthy with carrier and an ACTIVE RDMA port, and Allocate refuses
# unhealthy ones), then an rxe on each VF but the last one of NUMA 1, which must not be offered.
declare -A want_rxe
dp_vfs_up
last=${vfs[-1]}
i=0
for v in "${vfs[@]}"; do
  [[ $v == "$last" ]] && continue
  t_run "rdma link add rxv$i on $v" rdma link add "rxv$i" type rxe netdev "$v"
  want_rxe[$(pci_of_netdev "$v")]=rxv$i
  i=$((i + 1))
done
no_rxe=$(pci_of_netdev "$last")
step "VFs with rxe: ${!want_rxe[*]}; without: $no_rxe ($last)"

dp_start '{"resourceList": [{"resourceName": "vf", "selectors": [{"drivers": ["igbvf"],
  "isRdma": true}], "lossless": {"priority": 3}}]}' --log-level debug
KUBELET_TIMEOUT=120 t_run "the plugin registers rdma/vf and lists its devices" \
  kubelet wait rdma/vf 120000
t_run "all 7 devices Healthy" kubelet wait-healthy rdma/vf 7 7 60000
step "registered, device list:"
kubelet_table rdma/vf
list=$(kubelet_last devices rdma/vf)
t_eq "rdma/vf offers the 7 VFs that have an rxe" \
  "$(jq -r '[.devices[].id] | sort | join(" ")' <<<"$list")" \
  "$(printf '%s\n' "${!want_rxe[@]}" | sort | xargs)"
t_eq "the VF without rxe is not offered" \
  "$(jq --arg id "$no_rxe" '[.devices[] | select(.id == $id)] | length' <<<"$list")" 0
for id in "${!want_rxe[@]}"; do
  t_eq "$id is on NUMA ${vf_numa[$id]}" \
    "$(jq -c --arg id "$id" '.devices[] | select(.id == $id) | .numa' <<<"$list")" \
    "[${vf_numa[$id]}]"
done

# Allocate every VF, one container each (one Allocate call, as kubelet makes for a pod), and
# compare with the kernel's own uverbs -> rxe mapping.
declare -A uverbs_of
for u in /sys/class/infiniband_verbs/uverbs*; do uverbs_of[$(<"$u/ibdev")]=/dev/infiniband/${u##*/}; done
mapfile -t ids < <(printf '%s\n' "${!want_rxe[@]}" | sort)
if kubelet allocate rdma/vf "${ids[@]}"; then
  # One line per container: id, its uverbs nodes, NCCL_IB_HCA, the INFO env's rdma_dev.
  got=$(kubelet_last allocate rdma/vf | jq -r '.request as $q | .responses | to_entries[] |
    ($q[.key][0]) as $id | [$id,
     ([.value.devices[].host_path | select(startswith("/dev/infiniband/uverbs"))] | join(",")),
     .value.envs.NCCL_IB_HCA,
     (.value.envs.PCIDEVICE_RDMA_VF_INFO | fromjson | .[$id].rdma.rdma_dev)] | join(" ")')
  printf '%s\n' "$got"
  while read -r id uv hca dev; do
    rxe=${want_rxe[$id]}
    t_eq "Allocate $id: the uverbs node of $rxe" "$uv" "${uverbs_of[$rxe]}"
    t_eq "Allocate $id: NCCL_IB_HCA" "$hca" "=$rxe"
    t_eq "Allocate $id: PCIDEVICE_RDMA_VF_INFO names $rxe" "$dev" "$rxe"
  done <<<"$got"
  t_eq "one response per VF" "$(wc -l <<<"$got")" "${#want_rxe[@]}"
else
  t_fail "Allocate ${ids[*]}: $(kubelet_last allocate rdma/vf)"
fi
if kubelet allocate rdma/vf "$no_rxe"; then
  t_fail "Allocate $no_rxe (no RDMA device) succeeded"
else
  t_pass "Allocate $no_rxe (not in the pool) refused: $(kubelet_last allocate rdma/vf | jq -r '.error.code')"
fi

# A VF going into a pod (as the CNI moves it) takes its netdev out of the host's sysfs and, in
# shared RDMA netns mode, deletes its rxe. The plugin must keep offering it (kubelet's capacity
# must not shrink under a running pod), judged by its PF. Once its netdev is back without an
# rxe, it is no longer an RDMA device and leaves the isRdma pool.
moved=${vfs[0]}
moved_id=$(pci_of_netdev "$moved")
moved_rxe=${want_rxe[$moved_id]}
ip netns add dp-pod
ip link set "$moved" netns dp-pod
t_run "$moved_rxe is gone with $moved's move into a pod" \
  vm_poll 10 test ! -e "/sys/class/infiniband/$moved_rxe"
t_run "the plugin rescanned and remembers $moved_id" \
  vm_poll 15 grep -q "(1 with their netdev in a pod)" "$DEMO_WORK/dp.log"
kubelet devices rdma/vf >/dev/null
t_eq "$moved_id in a pod is still offered, Healthy" \
  "$(kubelet_last devices rdma/vf | jq -r --arg id "$moved_id" '.devices[] | select(.id == $id) | .health')" \
  Healthy
t_run "still 7 devices, all Healthy" kubelet wait-healthy rdma/vf 7 7 1000
ip -n dp-pod link set "$moved" netns 1
t_run "back in the host without an rxe, $moved_id leaves the isRdma pool" \
  kubelet wait-healthy rdma/vf 6 6 30000
ip netns del dp-pod
step "done"
t_done
