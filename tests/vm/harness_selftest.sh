#!/usr/bin/env bash
# vm test (run inside the guest by hack/vm/run.sh): the harness's own promises, on the default
# topology. Real SR-IOV sysfs with the right NUMA nodes; the VF knobs igb accepts and the ones it
# refuses; and the 802.1p priority on the wire: a VF with `vlan 100 qos 3` and a VLAN device with
# `egress-qos-map 0:5` on a VF, both captured on the other NIC's port (the two NICs share a hub).
set -u
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"

pf0=$(pf_of_numa 0)
pf1=$(pf_of_numa 1)
if [[ -z $pf0 || -z $pf1 ]]; then
  t_fail "one SR-IOV PF per NUMA node: got '$pf0' on 0 and '$pf1' on 1 ($(vm_sriov_pfs | xargs))"
  t_done
  exit
fi
echo "PFs: $pf0 ($(pci_of_netdev "$pf0"), NUMA 0), $pf1 ($(pci_of_netdev "$pf1"), NUMA 1)"

# --- sysfs shape ----------------------------------------------------------------------------------
check_sysfs() {
  local pf=$1 numa=$2 dev i vf
  dev=$(readlink -f "/sys/class/net/$pf/device")
  t_eq "$pf numa_node" "$(<"$dev/numa_node")" "$numa"
  t_eq "$pf driver" "$(basename "$(readlink "$dev/driver")")" igb
  t_eq "$pf sriov_totalvfs" "$(<"$dev/sriov_totalvfs")" 7
  t_eq "$pf sriov_numvfs" "$(<"$dev/sriov_numvfs")" 4
  for i in 0 1 2 3; do
    vf=$(readlink -f "$dev/virtfn$i")
    t_eq "$pf virtfn$i physfn" "$(readlink -f "$vf/physfn")" "$dev"
    t_eq "$pf virtfn$i driver" "$(basename "$(readlink "$vf/driver")")" igbvf
    t_eq "$pf virtfn$i numa_node" "$(<"$vf/numa_node")" "$numa"
    t_run "$pf virtfn$i has a netdev" netdev_of_pci "${vf##*/}"
  done
}
check_sysfs "$pf0" 0
check_sysfs "$pf1" 1
mapfile -t vfs0 < <(vfs_of "$pf0")
mapfile -t vfs1 < <(vfs_of "$pf1")
t_eq "VF netdevs of $pf0" "${#vfs0[@]}" 4
t_eq "VF netdevs of $pf1" "${#vfs1[@]}" 4
echo "VFs of $pf0: ${vfs0[*]}; VFs of $pf1: ${vfs1[*]}"

# --- VF knobs -------------------------------------------------------------------------------------
t_run "vf 2 mac" ip link set "$pf0" vf 2 mac 02:00:00:00:02:02
t_run "vf 2 spoofchk off" ip link set "$pf0" vf 2 spoofchk off
t_run "vf 2 trust on" ip link set "$pf0" vf 2 trust on
t_run "vf 2 max_tx_rate 100" ip link set "$pf0" vf 2 max_tx_rate 100
t_match "vf 2 knobs read back" 'vf 2 .*02:00:00:00:02:02.*tx rate 100.*spoof checking off.*trust on' \
  "$(ip link show "$pf0" | tr -s ' \n' ' ')"
t_refused "igb refuses vf state" ip link set "$pf0" vf 2 state enable
t_refused "igb refuses vlan proto 802.1ad" ip link set "$pf0" vf 2 vlan 100 proto 802.1ad
t_refused "igb refuses min_tx_rate" ip link set "$pf0" vf 2 min_tx_rate 10

# --- PCP on the wire ------------------------------------------------------------------------------
cap=$(mktemp -d)
# capture_ping NAME NETNS DST WANT: pings DST from NETNS while capturing on $pf1, expects WANT.
capture_ping() {
  local name=$1 ns=$2 dst=$3 want=$4
  vm_capture_start "$pf1" "$cap/$name" || {
    t_fail "$name: tcpdump did not start: $(cat "$cap/$name.err")"
    return
  }
  t_run "$name: ping $dst from netns $ns" ip netns exec "$ns" ping -c 2 -w 20 "$dst"
  vm_capture_stop
  t_match "$name: capture on $pf1 shows '$want'" "$want" "$(cat "$cap/$name")"
}

# Three VFs of the NUMA 0 NIC, each in its own netns. All are set up first and awaited together:
# under TCG a VF's carrier comes seconds after link up.
vfa=${vfs0[0]} vfb=${vfs0[1]} vfc=${vfs0[2]}
# A port VLAN with a priority: the NIC tags the VF's frames.
t_run "vf 0 vlan 100 qos 3" ip link set "$pf0" vf 0 vlan 100 qos 3
t_match "vf 0 vlan reads back" 'vf 0 .*vlan 100, qos 3' "$(ip link show "$pf0" | tr -s ' \n' ' ')"
t_run "vf 2 vlan 100" ip link set "$pf0" vf 2 vlan 100
for pair in pa:"$vfa" pb:"$vfb" pc:"$vfc"; do
  ip netns add "${pair%%:*}"
  ip link set "${pair#*:}" netns "${pair%%:*}"
  ip -n "${pair%%:*}" link set "${pair#*:}" up
done
ip -n pa addr add 192.168.100.1/24 dev "$vfa"
ip -n pc addr add 192.168.100.3/24 dev "$vfc"
ip link add link "$pf1" name peer100 type vlan id 100
ip link add link "$pf1" name peer200 type vlan id 200
ip addr add 192.168.100.2/24 dev peer100
ip addr add 192.168.200.2/24 dev peer200
ip link set peer100 up
ip link set peer200 up
# Static neighbours: QEMU's igb does not pad short frames before inserting the VLAN tag, so a
# tagged ARP (46 bytes) is dropped by the receiving PF as too short (rx_short_length_errors);
# a VF receives it fine. Pings (102 bytes tagged) are unaffected.
ip -n pa neigh add 192.168.100.2 lladdr "$(mac_of "$pf1")" dev "$vfa" nud permanent
ip neigh add 192.168.100.1 lladdr "$(mac_of -n pa "$vfa")" dev peer100 nud permanent
t_run "VF $vfa has carrier in netns pa" wait_carrier -n pa "$vfa" 60
t_run "VF $vfb has carrier in netns pb" wait_carrier -n pb "$vfb" 60
t_run "VF $vfc has carrier in netns pc" wait_carrier -n pc "$vfc" 60

capture_ping "port-vlan" pa 192.168.100.2 'vlan 100, p 3'

# A VLAN device on a VF: the kernel tags with the egress-qos-map priority. igbvf asks the PF
# for the VLAN filter over the mailbox, which works only once the VF is up (after its reset
# handshake): before that, the kernel answers EINVAL.
t_run "VLAN device with egress-qos-map 0:5 on VF $vfb" \
  ip -n pb link add link "$vfb" name vlan200 type vlan id 200 egress-qos-map 0:5
ip -n pb addr add 192.168.200.1/24 dev vlan200
ip -n pb link set vlan200 up
ip -n pb neigh add 192.168.200.2 lladdr "$(mac_of "$pf1")" dev vlan200 nud permanent
ip neigh add 192.168.200.1 lladdr "$(mac_of -n pb "$vfb")" dev peer200 nud permanent
capture_ping "egress-qos-map" pb 192.168.200.2 'vlan 200, p 5'

# VF to VF on one PF, through the NIC's internal switch (port VLAN 100 on both).
t_run "VF to VF on $pf0" ip netns exec pc ping -c 2 -w 20 192.168.100.1

t_done
