#!/usr/bin/env bash
# vm test: rdmanet's host-device mode with a VLAN inside the pod. A whole NIC (the NUMA 0 PF)
# moves into the pod by name; net1 is a VLAN 200 device on it whose egress-qos-map sends every
# priority to PCP 5, and the pod's frames leave tagged "vlan 200, p 5" (captured on the moved
# device, inside the pod); DEL brings the device back under its original name with its MAC.
# (A VF is not used: igb refuses VLAN filters requested by an igbvf VF, "Vlan id 200 is not
# added"; and QEMU's igb does not deliver PF-originated VLAN frames to the cabled peer, so the
# tag is checked on the sender.)
set -u
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
# shellcheck source=tests/vm/cni_lib.sh
source "$(dirname "$0")/cni_lib.sh"
trap cni_cleanup EXIT

dev=$(pf_of_numa 0)
mac=$(mac_of "$dev")
ip netns add pa
conf='{"cniVersion": "1.1.0", "name": "hd-vm", "type": "rdmanet", "device": "'$dev'",
  "vlan": 200, "lossless": {"priority": 5, "check": "off"},
  "ipam": '$(static_ipam 192.168.102.1/24)'}'
cni_ok "ADD $dev into pod a" ADD pa ca "$conf"
t_run "$dev left the host" test ! -e "/sys/class/net/$dev"
t_match "net1 is VLAN 200 on $dev" "vlan protocol 802.1Q id 200" "$(ip -n pa -d link show net1)"
t_match "net1 maps every priority to PCP 5" \
  'egress-qos-map \{ 0:5 1:5 2:5 3:5 4:5 5:5 6:5 7:5 \}' "$(ip -n pa -d link show net1)"
VM_CAPTURE_NETNS=pa vm_capture_start "$dev" "$cni_work/cap.txt" vlan
ip netns exec pa ping -c3 -W1 192.168.102.2 >/dev/null 2>&1  # ARP requests, tagged
vm_capture_stop
t_match "frames leave $dev as vlan 200, p 5" 'vlan 200, p 5' "$(cat "$cni_work/cap.txt")"
prev=$(printf '%s' "$conf" | sed 's/}$//')", \"prevResult\": $cni_out}"
cni_ok "CHECK" CHECK pa ca "$prev"
cni_ok "DEL" DEL pa ca "$conf"
t_run "$dev is back under its name" wait_for_link "$dev"
t_eq "$dev has its MAC" "$(mac_of "$dev")" "$mac"
t_refused "no net1 left in the pod" ip -n pa link show net1
cni_ok "DEL again" DEL pa ca "$conf"

# The state file lost while the device is in the pod: DEL finds it under the VLAN, deletes the
# VLAN and brings the device back under the netconf's name.
cni_ok "ADD for the lost-state case" ADD pa cs "$conf"
rm -f "$RDMANET_STATE_DIR"/*.json
cni_ok "DEL without a state file" DEL pa cs "$conf"
t_refused "no net1 left in the pod (lost state)" ip -n pa link show net1
t_run "$dev is back under its name (lost state)" wait_for_link "$dev"
t_done
