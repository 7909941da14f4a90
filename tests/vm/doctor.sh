#!/usr/bin/env bash
# vm test: the node doctor on a real kernel. With Soft-RoCE on each igb PF (the port's RDMA
# device), rdmanet-doctor reading the guest's real /sys and netlink must report what the kernel
# shows: both ports up with their NUMA node, ACTIVE RoCE ports mapped to their netdevs, no GPU,
# and DCB as UNKNOWN (igb, like every emulated driver, does not implement DCB, so PFC cannot be
# read). Real faults are FAILs with exit code 1: ports at 1500 bytes (as booted; RoCE wants
# jumbo frames) and a port taken down.
#
#   doctor.sh DOCTOR
set -u
doctor=$(readlink -f "${1:?rdmanet-doctor binary}")
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"

pf0=$(pf_of_numa 0)
pf1=$(pf_of_numa 1)
t_run "rxe on $pf0" rdma link add rxp0 type rxe netdev "$pf0"
t_run "rxe on $pf1" rdma link add rxp1 type rxe netdev "$pf1"

# verdict JSON CHECK DEVICE: the verdict of one check.
verdict() { jq -r --arg c "$2" --arg d "$3" '.checks[] | select(.check == $c and .device == $d) | .verdict' <<<"$1"; }
evidence() { jq -r --arg c "$2" --arg d "$3" --arg k "$4" '.checks[] | select(.check == $c and .device == $d) | .evidence[$k]' <<<"$1"; }

# As booted, the ports run at 1500 bytes: the doctor expects RoCE ports at jumbo MTU (9000).
j=$("$doctor" --json --lossless-priority 3)
rc=$?
t_eq "1500-byte ports: exit 1" "$rc" 1
t_eq "mtu $pf0 at 1500: FAIL" "$(verdict "$j" mtu "$pf0")" FAIL
t_eq "mtu $pf0 evidence" "$(evidence "$j" mtu "$pf0" mtu)" 1500

# Jumbo ports (an MTU change resets the igb port: wait for carrier and the RoCE ports).
ip link set "$pf0" mtu 9000
ip link set "$pf1" mtu 9000
rxe_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state"; }
for pf in "$pf0" "$pf1"; do wait_carrier "$pf" 60 || t_fail "$pf: no carrier after the MTU change"; done
vm_poll 30 rxe_active rxp0
vm_poll 30 rxe_active rxp1
"$doctor" --lossless-priority 3
rc=$?
t_eq "healthy node: exit code 0 (no FAIL)" "$rc" 0
j=$("$doctor" --json --lossless-priority 3)
for pf in "$pf0" "$pf1"; do
  t_eq "link $pf" "$(verdict "$j" link "$pf")" PASS
  t_eq "mtu $pf" "$(verdict "$j" mtu "$pf")" PASS
  t_eq "pfc $pf: DCB unknown on a real driver without DCB" "$(verdict "$j" pfc "$pf")" UNKNOWN
  t_match "pfc $pf evidence says why" 'does not report DCB|not supported' \
    "$(evidence "$j" pfc "$pf" dcb)"
done
for r in rxp0 rxp1; do
  t_eq "rdma_port $r/1" "$(verdict "$j" rdma_port "$r/1")" PASS
  t_eq "rdma_port $r/1 link layer" "$(evidence "$j" rdma_port "$r/1" link_layer)" Ethernet
done
t_match "ibdev2netdev rxp0 -> $pf0" "rxp0 port 1 ==> $pf0 " "$(evidence "$j" ibdev2netdev rxp0/1 mapping)"
t_match "ibdev2netdev rxp1 -> $pf1" "rxp1 port 1 ==> $pf1 " "$(evidence "$j" ibdev2netdev rxp1/1 mapping)"
t_eq "no GPU on the guest: no numa or topology check" \
  "$(jq '[.checks[] | select(.check == "numa" or .check == "topology")] | length' <<<"$j")" 0
t_eq "no FAIL" "$(jq '.summary.FAIL' <<<"$j")" 0
table=$("$doctor")
# The PCIe root column is the guest's own: /sys/devices/<root>/... of the PF, the pxb-pcie
# expander's bus (resource.kubernetes.io/pcieRoot, as DRA publishes it).
root0=$(readlink -f "/sys/class/net/$pf0/device" | cut -d/ -f4)
root1=$(readlink -f "/sys/class/net/$pf1/device" | cut -d/ -f4)
t_match "the matrix lists rxp0 on NUMA 0 under $root0 ($pf0)" "^rxp0 +0 +$root0 +$pf0" "$table"
t_match "the matrix lists rxp1 on NUMA 1 under $root1 ($pf1)" "^rxp1 +1 +$root1 +$pf1" "$table"
t_eq "two PCIe roots, one per expander" "$([[ $root0 != "$root1" && $root0 = pci* ]] && echo yes)" yes

# A port taken down: its link FAILs, and so does its RoCE port (rxe follows the netdev).
ip link set "$pf1" down
vm_poll 10 bash -c "! grep -q ACTIVE /sys/class/infiniband/rxp1/ports/1/state"
"$doctor" | grep -E "^(link|rdma_port) "
j=$("$doctor" --json)
rc=$?
t_eq "$pf1 down: exit 1" "$rc" 1
t_eq "$pf1 down: link FAIL" "$(verdict "$j" link "$pf1")" FAIL
t_eq "$pf1 down: operstate" "$(evidence "$j" link "$pf1" operstate)" down
t_eq "$pf1 down: rxp1 port not ACTIVE" "$(verdict "$j" rdma_port rxp1/1)" FAIL
t_eq "$pf0 still fine" "$(verdict "$j" link "$pf0")" PASS
t_done
