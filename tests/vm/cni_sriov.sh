#!/usr/bin/env bash
# vm test: rdmanet's sriov mode end to end on igb VFs. A VF of each of the two cabled PFs goes
# into its own pod with VLAN 100, lossless priority 3 (VST: vlan 100 qos 3 through the PF) and
# static IPAM; the pods ping; a capture on the peer PF shows the frames tagged "vlan 100, p 3";
# DEL restores every VF setting and the netdev's name, and, with the state file lost, still
# brings the VF back with default settings; a knob the driver refuses (igb has no link_state)
# fails cleanly with everything rolled back; the share of its port a pod's DRA claim holds caps
# the VF's max_tx_rate until DEL restores the rate it had.
set -u
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
# shellcheck source=tests/vm/cni_lib.sh
source "$(dirname "$0")/cni_lib.sh"
trap cni_cleanup EXIT

pf0=$(pf_of_numa 0)
pf1=$(pf_of_numa 1)
vf0=$(vf_pci_of "$pf0" 1)
vf1=$(vf_pci_of "$pf1" 1)
vf0_name=$(netdev_of_pci "$vf0")
vf1_name=$(netdev_of_pci "$vf1")
echo "PF0 $pf0 VF1 $vf0 ($vf0_name); PF1 $pf1 VF1 $vf1 ($vf1_name)"
before0=$(vf_line "$pf0" 1)
before1=$(vf_line "$pf1" 1)
mac0=$(mac_of "$vf0_name")
ip netns add pa
ip netns add pb

conf() {  # conf DEVICE_ID ADDRESS [EXTRA]
  printf '{"cniVersion": "1.1.0", "name": "sriov-vm", "type": "rdmanet", "deviceID": "%s",
    "vlan": 100, "lossless": {"priority": 3, "check": "warn"}, "spoofchk": "off",
    "trust": "on", "mac": "02:00:00:64:%s:0%s", "ipam": %s %s}' \
    "$1" "${1:5:2}" "${1: -1}" "$(static_ipam "$2")" "${3:-}"
}
cni_ok "ADD VF $vf0 into pod a" ADD pa ca "$(conf "$vf0" 192.168.100.1/24)"
add_a=$cni_out
cni_ok "ADD VF $vf1 into pod b" ADD pb cb "$(conf "$vf1" 192.168.100.2/24)"
t_match "result carries pciID and mtu (1.1.0)" "\"pciID\":\"$vf0\"" "$add_a"
t_run "net1 is in pod a" ip -n pa link show net1
t_run "$vf0_name left the host" test ! -e "/sys/class/net/$vf0_name"
t_match "PF0 sets VF 1 vlan 100 qos 3" 'vlan 100, qos 3' "$(vf_line "$pf0" 1)"
t_match "PF0 sets VF 1 spoof checking off, trust on" 'spoof checking off.*trust on' "$(vf_line "$pf0" 1)"
wait_carrier -n pa net1 30
wait_carrier -n pb net1 30
t_run "pod a pings pod b over VLAN 100" vm_poll 20 ip netns exec pa ping -c1 -W1 192.168.100.2

# The wire: frames from pod a reach PF1 tagged with VLAN 100 and PCP 3.
open_vlan_filter "$pf1" 100
vm_capture_start "$pf1" "$cni_work/cap.txt" vlan
ip netns exec pa ping -c3 -W1 192.168.100.77 >/dev/null 2>&1  # ARP broadcasts, tagged
vm_capture_stop
ip link del "cap100"
t_match "capture on $pf1 shows vlan 100, p 3" 'vlan 100, p 3' "$(cat "$cni_work/cap.txt")"

prev=$(printf '%s' "$(conf "$vf0" 192.168.100.1/24)" | sed 's/}$//')", \"prevResult\": $add_a}"
cni_ok "CHECK pod a" CHECK pa ca "$prev"
cni_ok "DEL pod a" DEL pa ca "$prev"
cni_ok "DEL pod b" DEL pb cb "$(conf "$vf1" 192.168.100.2/24)"
cni_ok "DEL pod a again" DEL pa ca "$prev"
t_eq "PF0 VF 1 settings restored" "$(vf_line "$pf0" 1)" "$before0"
t_eq "PF1 VF 1 settings restored" "$(vf_line "$pf1" 1)" "$before1"
t_run "$vf0_name is back in the host" wait_for_link "$vf0_name"
t_eq "$vf0_name has its MAC back" "$(mac_of "$vf0_name")" "$mac0"

# DEL after the netns is gone: the VF falls back to the host and is restored from the state.
cni_ok "ADD again" ADD pa ca "$(conf "$vf0" 192.168.100.1/24)"
ip netns del pa
cni_ok "DEL after netns deletion" DEL "" ca "$(conf "$vf0" 192.168.100.1/24)"
t_eq "PF0 VF 1 settings restored after netns deletion" "$(vf_line "$pf0" 1)" "$before0"
t_run "$vf0_name is back under its name" wait_for_link "$vf0_name"

# DEL after the state file is lost (a wiped /var/lib/cni) while the pod still holds the VF: the
# kernel's parent device identifies it in the pod, its knobs are reset to defaults through the
# PF, and it comes back under <pf>v<N> (sysfs no longer knows its old name).
ip netns add pa
cni_ok "ADD for the lost-state case" ADD pa cs "$(conf "$vf0" 192.168.100.1/24)"
rm -f "$RDMANET_STATE_DIR"/*.json
cni_ok "DEL without a state file" DEL pa cs "$(conf "$vf0" 192.168.100.1/24)"
t_refused "net1 left pod a" ip -n pa link show net1
t_eq "PF0 VF 1 back to defaults without state" "$(vf_line "$pf0" 1)" "$before0"
back=$(netdev_of_pci "$vf0")
want="${pf0}v1"
((${#want} > 15)) && want=$back  # too long for IFNAMSIZ: the PCI path name is used instead
t_eq "the VF is back in the host as $want" "$back" "$want"
t_eq "the VF is down in the host" "$(cat "/sys/class/net/$back/operstate" 2>/dev/null)" down
cni_ok "a second DEL without state is a no-op" DEL pa cs "$(conf "$vf0" 192.168.100.1/24)"
t_eq "PF0 VF 1 still at defaults" "$(vf_line "$pf0" 1)" "$before0"
[[ -n $back && $back != "$vf0_name" ]] && ip link set dev "$back" name "$vf0_name"

# A knob igb refuses: link_state. Clean error, nothing changed.
out=$(cni ADD pa cx "$(conf "$vf0" 192.168.100.1/24 ', "link_state": "enable"')")
rc=$?
t_eq "link_state refused: non-zero exit" "$((rc != 0))" 1
t_match "link_state refused: error names the knob and EOPNOTSUPP" \
  '"code":101.*link_state.*(not supported|Operation not supported)' "$out"
t_eq "link_state refused: VF settings untouched" "$(vf_line "$pf0" 1)" "$before0"
t_run "link_state refused: $vf0_name still in the host" test -e "/sys/class/net/$vf0_name"
t_run "link_state refused: no state left" test -z "$(ls "$RDMANET_STATE_DIR"/*.json 2>/dev/null)"

# enforce on a port without DCB (igb): code 7 naming the port.
out=$(cni ADD pa cy "$(conf "$vf0" 192.168.100.1/24 | sed 's/"warn"/"enforce"/')")
t_match "lossless enforce without DCB is code 7 naming $pf0" "\"code\":7.*$pf0" "$out"

# A VF as a partition of its PF (issue 32): the device plugin's DRA record of the pod's claim
# gives the VF a share of its port ("maxTxRateMbps"); ADD caps the VF's max_tx_rate at it, DEL
# restores the rate the VF had (set here by hand, so that "restored" is not just "default").
vf_max_rate() {  # vf_max_rate PF IDX: the VF's max_tx_rate in Mbit/s as the PF reports it, 0: none
  local r
  r=$(vf_line "$1" "$2" | grep -oE 'max_tx_rate [0-9]+' | head -n 1)
  r=${r#max_tx_rate }
  echo "${r:-0}"
}
share=100
cni_pod_uid=5f0c1d2e-0000-4000-8000-0000000000a1
dra_dir=/var/run/rdmanet/vm-dra-$$
mkdir -p "$dra_dir/$cni_pod_uid"
printf '{"claim": {"namespace": "vm", "name": "c", "uid": "cr"}, "devices": [{"request": "nic",
  "resourceName": "rdma/vf", "pciAddress": "%s", "device": "d", "maxTxRateMbps": %s}]}' \
  "$vf0" "$share" >"$dra_dir/$cni_pod_uid/cr.json"
t_run "PF0 VF 1 given a rate of its own" ip link set "$pf0" vf 1 max_tx_rate 200
share_conf=$(conf "$vf0" 192.168.100.1/24 ", \"draDevicesDir\": \"$dra_dir\", \"resourceName\": \"rdma/vf\"")
cni_ok "ADD of a VF its pod's claim holds $share Mbit/s of" ADD pa cr "$share_conf"
t_eq "PF0 VF 1 max_tx_rate is the claim's share" "$(vf_max_rate "$pf0" 1)" "$share"
cni_ok "DEL of the claimed VF" DEL pa cr "$share_conf"
t_eq "PF0 VF 1 max_tx_rate back to its own" "$(vf_max_rate "$pf0" 1)" 200
ip link set "$pf0" vf 1 max_tx_rate 0
cni_pod_uid=""
rm -rf "$dra_dir"
t_done
