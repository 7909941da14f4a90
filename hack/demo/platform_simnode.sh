# shellcheck shell=bash disable=SC2034 # plat_root, PLAT_NA: read by story.sh and pods.sh
# The demo's node when the VM cannot run: the simulated node on this host (hack/simnode: a fake
# sysfs tree of the default two-socket topology plus one real veth per netdev, the other ends
# bridged in a private netns, so "VFs" can ping each other).
#
# This kernel has no SR-IOV and no VLAN: the "VFs" are veths, which have no VF knobs behind a PF
# and cannot carry a VLAN tag. So the pods get their VF in host-device mode (the whole netdev
# moves into the pod; what sriov mode does with the netdev itself), and the steps that need VF
# knobs or a tag on the wire (the PCP capture, the PF's VF table) are N/A here.

plat_root=${RDMANET_DEMO_SIMNODE_ROOT:-/run/rdmanet-demo}
plat_prefix=dm

plat_describe() {
  echo "the simulated node on this host (kernel $(uname -r): no SR-IOV, VLAN or RDMA here);"
  echo "   its \"VFs\" are veths, so the pods get them in host-device mode, untagged"
}

plat_up() {
  "$RDMANET_DEMO_BIN_SIMNODE" down --root "$plat_root" >/dev/null 2>&1
  run_show -n 4 "$RDMANET_DEMO_BIN_SIMNODE" up --root "$plat_root" --ifprefix "$plat_prefix" \
    --topology "$RDMANET_DEMO_REPO/hack/topologies/default.json" || return 1
  run_show -n 8 "$RDMANET_DEMO_BIN_SIMNODE" show --root "$plat_root"
}

plat_down() {
  "$RDMANET_DEMO_BIN_SIMNODE" down --root "$plat_root" >/dev/null 2>&1
}

plat_keep() { :; }
plat_keep_note() {
  echo "simulated node kept: root $plat_root, netdevs ${plat_prefix}ens*;" \
    "remove it with: hack/simnode down --root $plat_root"
}

# plat_pf_of_numa N: the netdev of the first PF on NUMA node N (from the simulated tree).
plat_pf_of_numa() {
  local d
  for d in "$plat_root"/sys/bus/pci/devices/*; do
    [[ -f $d/sriov_totalvfs && $(<"$d/numa_node") == "$1" ]] || continue
    plat_netdev_of_pci "${d##*/}" && return 0
  done
  return 1
}

plat_pools_json() { demo_pools_json '{"vendors": ["15b3"], "devices": ["101e"], "isRdma": true}'; }

# plat_netconf DEVICE_ID ADDRESS DEVINFO_FILE: the pod network's netconf, as Multus passes it.
plat_netconf() {
  jq -n --arg dev "$1" --arg ip "$2" --arg info "$3" --arg pi "$DEMO_WORK/pod-info" '{
    cniVersion: "1.1.0", name: "rdma-net", type: "rdmanet", mode: "host-device",
    deviceID: $dev, mtu: 9000, lossless: {priority: 3, check: "warn"},
    podInfoDir: $pi, ipam: {type: "static", addresses: [{address: $ip}]},
    capabilities: {deviceID: true, CNIDeviceInfoFile: true}, pciBusID: $dev,
    runtimeConfig: {deviceID: $dev, CNIDeviceInfoFile: $info}}'
}
plat_netconf_note() {
  echo "mode host-device: sriov mode sets VF knobs through the PF, which a veth does not have;"
  echo "   no vlan: this kernel has no 802.1Q, so the lossless priority is checked (warn) but untagged"
}

# plat_link IF up|down: the port's carrier goes away / comes back (the peer end of the veth).
plat_link() { run_show -n 2 "$RDMANET_DEMO_BIN_SIMNODE" link "$1" "$2" --root "$plat_root"; }

plat_wait_pod_carrier() { demo_poll 10 bash -c "ip -n $1 -o link show eth1 | grep -q LOWER_UP"; }

plat_capture() {
  PLAT_NA="this kernel has no VLAN: no PCP on the wire to capture (the VM path shows it)"
  return 2
}
plat_rdma_traffic() {
  PLAT_NA="this kernel has no RDMA (no rdma_rxe) and no VLAN: the VM path runs ib_write_bw"
  return 2
}
plat_vf_settings() {
  PLAT_NA="a veth \"PF\" has no VF table (the VM path shows it)"
  return 2
}

plat_vf_show() { printf '%s\n' "$1"; }
plat_after_add_note() { :; }
plat_after_del_note() { :; }

# plat_vf_snapshot: every VF as the host sees it (name, MAC, MTU, up/down); DEL must restore it.
plat_vf_snapshot() {
  local d n
  for d in "$plat_root"/sys/bus/pci/devices/*; do
    [[ -e $d/physfn ]] || continue
    n=$(plat_netdev_of_pci "${d##*/}") || {
      echo "${d##*/} no netdev in the host"
      continue
    }
    ip -j link show dev "$n" |
      jq -r --arg pci "${d##*/}" '.[0] | "\($pci) \(.ifname) \(.address) mtu \(.mtu) \(.flags | index("UP") != null | if . then "up" else "down" end)"'
  done
}

plat_netdev_of_pci() {
  local n
  for n in "$plat_root"/sys/bus/pci/devices/"$1"/net/*; do
    [[ -e $n ]] && echo "${n##*/}" && return 0
  done
  return 1
}
