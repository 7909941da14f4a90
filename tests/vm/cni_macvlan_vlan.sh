#!/usr/bin/env bash
# vm test: rdmanet's macvlan mode on a VLAN. Two pods' macvlans share the host VLAN device
# <pf>.100, whose egress-qos-map sends every priority to the lossless PCP 3; the pods ping each
# other; the frames leave the PF tagged "vlan 100, p 3" (captured on the PF's egress: QEMU's igb
# does not deliver PF-originated VLAN frames to the cabled peer, VF-originated ones it does, see
# cni_sriov.sh); the VLAN device goes with the last pod, and with a pod whose state file and netns
# are both gone.
set -u
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
# shellcheck source=tests/vm/cni_lib.sh
source "$(dirname "$0")/cni_lib.sh"
trap cni_cleanup EXIT

pf0=$(pf_of_numa 0)
ip netns add pa
ip netns add pb
conf() {
  printf '{"cniVersion": "1.0.0", "name": "mv-vm", "type": "rdmanet", "master": "%s",
    "mode": "bridge", "vlan": 100, "lossless": {"priority": 3}, "ipam": %s}' "$pf0" \
    "$(static_ipam "$1")"
}
cni_ok "ADD pod a" ADD pa ca "$(conf 192.168.101.1/24)"
cni_ok "ADD pod b" ADD pb cb "$(conf 192.168.101.2/24)"
vlan=${pf0:0:11}.100
t_run "host VLAN device $vlan exists" ip link show "$vlan"
t_match "$vlan maps every priority to PCP 3" \
  'egress-qos-map \{ 0:3 1:3 2:3 3:3 4:3 5:3 6:3 7:3 \}' "$(ip -d link show "$vlan")"
t_match "net1 in pod a is a macvlan on $vlan" 'macvlan' "$(ip -n pa -d link show net1)"
t_run "pod a pings pod b" vm_poll 20 ip netns exec pa ping -c1 -W1 192.168.101.2

mac_a=$(mac_of -n pa net1)
vm_capture_start "$pf0" "$cni_work/cap.txt" vlan and ether src "$mac_a"
ip netns exec pa ping -c3 -W1 192.168.101.77 >/dev/null 2>&1
vm_capture_stop
t_match "pod a's frames leave $pf0 as vlan 100, p 3" "$mac_a.*vlan 100, p 3" "$(cat "$cni_work/cap.txt")"

cni_ok "DEL pod a" DEL pa ca "$(conf 192.168.101.1/24)"
t_run "$vlan stays while pod b uses it" ip link show "$vlan"
cni_ok "DEL pod b" DEL pb cb "$(conf 192.168.101.2/24)"
t_refused "$vlan is gone with the last pod" ip link show "$vlan"

# The state file lost and the pod's netns gone too: DEL still releases the pod's use of $vlan.
cni_ok "ADD pod a again" ADD pa cs "$(conf 192.168.101.1/24)"
t_run "$vlan is back" ip link show "$vlan"
rm -f "$RDMANET_STATE_DIR"/*.json
ip netns del pa
cni_ok "DEL without a state file or netns" DEL "" cs "$(conf 192.168.101.1/24)"
t_refused "$vlan is gone (lost state)" ip link show "$vlan"
t_run "no state left" test -z "$(ls "$RDMANET_STATE_DIR"/*.json "$RDMANET_STATE_DIR"/vlan/* 2>/dev/null)"
t_done
