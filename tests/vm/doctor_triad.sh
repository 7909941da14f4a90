#!/usr/bin/env bash
# vm test: rdma-core for real and the lossless triad beyond PFC, on the guest's real kernel.
#   1. Verbs against Soft-RoCE: IbvRdmaVerbs (rdmanet-verbs-dump) answers what `ibv_devinfo -v`
#      shows for rxe on an igb PF: port state, active/max MTU, link layer, speed x width, and
#      every GID with its type; the doctor says source=verbs and judges the RoCE active MTU
#      against the netdev MTU (1500 -> 1024, 9000 -> 4096).
#   2. Global pause over ethtool netlink on igb, after `ethtool -A` changed it: off -> PASS,
#      rx/tx on -> WARN (igb has no DCB, so PFC is unknown), matching `ethtool -a`.
#   3. ECN/DCQCN on a driver that exposes none of it: UNKNOWN, never PASS.
#
#   doctor_triad.sh DOCTOR VERBS_DUMP
set -u
doctor=$(readlink -f "${1:?rdmanet-doctor binary}")
dump=$(readlink -f "${2:?rdmanet-verbs-dump binary}")
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"

pf0=$(pf_of_numa 0)
t_run "rxe on $pf0" rdma link add rxt0 type rxe netdev "$pf0"
rxe_active() { grep -q ACTIVE "/sys/class/infiniband/rxt0/ports/1/state"; }
t_run "rxt0 ACTIVE" vm_poll 30 rxe_active

verdict() { jq -r --arg c "$2" --arg d "$3" '.checks[] | select(.check == $c and .device == $d) | .verdict' <<<"$1"; }
evidence() { jq -r --arg c "$2" --arg d "$3" --arg k "$4" '.checks[] | select(.check == $c and .device == $d) | .evidence[$k]' <<<"$1"; }
# devinfo FIELD: the first value of "FIELD: value" in ibv_devinfo -v (port 1 only here).
devinfo() { sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" <<<"$info" | head -1; }
# dump FIELD: rdmanet-verbs-dump's "port 1 FIELD value".
dumped() { sed -n "s/^port 1 $1 //p" <<<"$out"; }

# --- 1. verbs vs ibv_devinfo -v, at two netdev MTUs -------------------------------------------
check_verbs() {
  local mtu=$1 want_active=$2
  info=$(ibv_devinfo -v -d rxt0 2>&1)
  out=$("$dump" rxt0 2>&1)
  echo "$out"
  t_match "[$mtu] ibv_devinfo knows rxt0" 'hca_id:[[:space:]]+rxt0' "$info"
  t_eq "[$mtu] state vs ibv_devinfo" "$(dumped state)" "$(devinfo state | sed 's/.*(\([0-9]*\))/\1/')"
  t_eq "[$mtu] active_mtu vs ibv_devinfo" "$(dumped active_mtu)" "$(devinfo active_mtu | cut -d' ' -f1)"
  t_eq "[$mtu] active_mtu is the largest $mtu allows" "$(dumped active_mtu)" "$want_active"
  t_eq "[$mtu] max_mtu vs ibv_devinfo" "$(dumped max_mtu)" "$(devinfo max_mtu | cut -d' ' -f1)"
  t_eq "[$mtu] link_layer vs ibv_devinfo" "$(dumped link_layer)" "$(devinfo link_layer)"
  # "2.5 Gbps (1)" and "1X (1)" -> "2.5 Gb/sec (1X ..."
  local speed width
  speed=$(devinfo active_speed | cut -d' ' -f1)
  width=$(devinfo active_width | cut -d' ' -f1)
  t_match "[$mtu] rate vs ibv_devinfo ($speed Gbps x $width)" \
    "^([0-9.]+) Gb/sec \\($width " "$(dumped rate)"
  # GIDs: "GID[  1]:  ::ffff:192.168.77.1, RoCE v2" against "gid 1 1 ::ffff:192.168.77.1 RoCE v2 ethX"
  local want got
  want=$(sed -n 's/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*\([^,]*\), \(.*\)$/\1 \2 \3/p' <<<"$info" | sort)
  got=$(sed -n 's/^gid 1 \([0-9]*\) \([^ ]*\) \(.*\) [^ ]*$/\1 \2 \3/p' <<<"$out" | sed 's/IB\/RoCE v1/RoCE v1/' | sort)
  t_eq "[$mtu] GID table with types vs ibv_devinfo" "$got" "$want"
  t_match "[$mtu] every GID names $pf0" "^gid 1 0 .* $pf0\$" "$out"
}

ip addr add 192.168.77.1/24 dev "$pf0"
has_v4_gid() { "$dump" rxt0 | grep -q '::ffff:192.168.77.1 RoCE v2'; }
t_run "RoCE v2 GID for 192.168.77.1 (verbs)" vm_poll 20 has_v4_gid
check_verbs 1500 1024

j=$("$doctor" --json --expect-mtu 1500)
t_eq "doctor rdma_port source" "$(evidence "$j" rdma_port rxt0/1 source)" verbs
t_eq "doctor roce_mtu at 1500" "$(verdict "$j" roce_mtu rxt0/1)" PASS
t_eq "doctor roce_mtu active at 1500" "$(evidence "$j" roce_mtu rxt0/1 active_mtu)" 1024

ip link set "$pf0" mtu 9000
wait_carrier "$pf0" 60 || t_fail "$pf0: no carrier after the MTU change"
active_4096() { [[ $("$dump" rxt0 | sed -n 's/^port 1 active_mtu //p') == 4096 ]]; }
t_run "rxt0 follows the 9000 MTU" vm_poll 30 active_4096
t_run "rxt0 ACTIVE again" vm_poll 30 rxe_active
check_verbs 9000 4096
j=$("$doctor" --json)
t_eq "doctor roce_mtu at 9000" "$(verdict "$j" roce_mtu rxt0/1)" PASS
t_eq "doctor roce_mtu expected at 9000" "$(evidence "$j" roce_mtu rxt0/1 expected)" 4096

# --- 2. global pause on igb ---------------------------------------------------------------------
ethtool -a "$pf0"
ethtool -A "$pf0" autoneg off rx off tx off
t_match "ethtool -a shows pause off" 'RX:[[:space:]]+off' "$(ethtool -a "$pf0")"
j=$("$doctor" --json)
t_eq "pause off: PASS" "$(verdict "$j" pause "$pf0")" PASS
t_eq "pause off: rx" "$(evidence "$j" pause "$pf0" rx)" off
t_eq "pause off: tx" "$(evidence "$j" pause "$pf0" tx)" off
t_eq "pause off: PFC unknown on igb" "$(evidence "$j" pause "$pf0" pfc)" unknown

ethtool -A "$pf0" autoneg off rx on tx on
t_match "ethtool -a shows pause on" 'TX:[[:space:]]+on' "$(ethtool -a "$pf0")"
j=$("$doctor" --json)
t_eq "pause on without PFC: WARN" "$(verdict "$j" pause "$pf0")" WARN
t_eq "pause on: rx" "$(evidence "$j" pause "$pf0" rx)" on
t_eq "pause on: tx" "$(evidence "$j" pause "$pf0" tx)" on
t_match "pause remedy" 'ethtool -A' "$(jq -r --arg d "$pf0" '.checks[] | select(.check == "pause" and .device == $d) | .remedy' <<<"$j")"

# --- 3. ECN on a driver that exposes none -------------------------------------------------------
t_eq "ecn: UNKNOWN on igb" "$(verdict "$j" ecn "$pf0")" UNKNOWN
t_eq "cnp: UNKNOWN on igb" "$(verdict "$j" cnp "$pf0")" UNKNOWN
"$doctor" | grep -E "^(rdma_port|roce_mtu|mtu_chain|pause|ecn|cnp) "
t_done
