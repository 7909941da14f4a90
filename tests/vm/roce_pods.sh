#!/usr/bin/env bash
# vm test: RDMA traffic between two pods carries the lossless priority. Two pods get a VF each
# through the real rdmanet CNI (sriov mode, VLAN 100, lossless priority 3, MTU 9000; the two PFs
# are wired to each other); Soft-RoCE runs over them in the arrangement of hack/vm/roce_pods.sh
# (an ipvlan slave of each VF in the initial netns carries the rxe). perftest's ib_write_bw and
# ib_send_lat run from the pods, rping between the two addresses; a capture on pod b's PF shows
# the RoCE v2 frames (UDP 4791) tagged "vlan 100, p 3", every one of them. Then the same with
# priority 5: "p 5". Bandwidth under TCG means nothing; that the traffic flows and is tagged does.
#
#   roce_pods.sh CNI_BIN
set -u
cni_bin=$(readlink -f "${1:?usage: roce_pods.sh CNI_BIN}")
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
# shellcheck source=hack/vm/roce_pods.sh
source "$RDMANET_VM_DIR/roce_pods.sh"
work=$(mktemp -d /tmp/roce-test.XXXXXX)
trap 'roce_pods_down; rm -rf "$work"' EXIT
SECONDS=0
step() { echo "[${SECONDS}s] $*"; }

# perftest PROG ARGS...: PROG's server in pod b, its client in pod a (roce_perftest); prints
# the client's output, which is also in $work/PROG.txt (the server's in $work/PROG.txt.server).
# Passes when both end with 0.
perftest() {
  local prog=$1 rc=0
  shift
  roce_perftest "$ROCE_NS_A" "$ROCE_NS_B" "$ROCE_POD_IP_B" "$work/$prog.txt" "$prog" "$@" || rc=$?
  cat "$work/$prog.txt"
  return "$rc"
}

# tagged_capture PRIO: ib_write_bw under a capture on pod b's PF; every RoCE frame is tagged
# vlan 100 with PCP PRIO.
tagged_capture() {
  local prio=$1 cap=$work/cap-$1.txt total tagged
  roce_capture_start "$cap" || { t_fail "capture on $ROCE_PF_B did not start" && return; }
  perftest ib_write_bw -s 65536 -n 500 -u 20 --report_gbits >/dev/null
  roce_capture_stop
  total=$(grep -c '\.4791: UDP' "$cap")
  tagged=$(grep -c "vlan 100, p $prio, .*\.4791: UDP" "$cap")
  grep -m 2 '4791: UDP' "$cap" | cut -c 17-200
  t_match "RoCE v2 frames on $ROCE_PF_B tagged vlan 100, p $prio" "vlan 100, p $prio, .*\.4791: UDP" \
    "$(head -n 3 "$cap")"
  t_eq "every captured RoCE frame carries p $prio ($total captured)" "$tagged" "$total"
  t_run "more than 100 RoCE frames captured ($total)" test "$total" -gt 100
}

# --- priority 3 ----------------------------------------------------------------------------------
if roce_pods_up "$cni_bin" 3; then
  t_pass "two pods with VFs through rdmanet (VLAN 100, priority 3, MTU 9000) and Soft-RoCE"
else
  t_fail "setting up the pods (priority 3)"
  t_done
  exit
fi
step "pod a: $ROCE_VF_A on $ROCE_PF_A, $ROCE_POD_IP_A; pod b: $ROCE_VF_B on $ROCE_PF_B," \
  "$ROCE_POD_IP_B; RDMA: $ROCE_DEV_A ($ROCE_IP_A, GID $ROCE_GID_A) <-> $ROCE_DEV_B" \
  "($ROCE_IP_B, GID $ROCE_GID_B)"
t_match "PF sets pod a's VF vlan 100, qos 3" 'vlan 100, qos 3' "$(ip link show "$ROCE_PF_A" | grep -E '^ +vf 1 ')"
t_eq "pod a's net1 MTU" "$(ip -n "$ROCE_NS_A" -j link show net1 | jq '.[0].mtu')" 9000

# -u 20: a 4 s QP timeout; perftest's default (67 ms) is short for Soft-RoCE under a loaded TCG.
if out=$(perftest ib_write_bw -s 65536 -n 500 -u 20 --report_gbits); then
  bw=$(awk '$1 == 65536 && $2 == 500 { print $4 }' <<<"$out")
  t_match "ib_write_bw: 500 x 64 KiB RDMA writes from pod a to pod b ($bw Gbit/s under TCG)" \
    '^[0-9.]+$' "$bw"
else
  t_fail "ib_write_bw: $out $(cat "$work/ib_write_bw.txt.server")"
fi
step "ib_write_bw done"
if out=$(perftest ib_send_lat -s 64 -n 200 -u 20); then
  lat=$(awk '$1 == 64 && $2 == 200 { print $5 }' <<<"$out")
  t_match "ib_send_lat: 200 sends, typical latency $lat us under TCG" '^[0-9.]+$' "$lat"
else
  t_fail "ib_send_lat: $out $(cat "$work/ib_send_lat-server.txt")"
fi
step "ib_send_lat done"

# rping over rdma_cm: the server on pod b's RDMA address, the client from pod a's; the client
# retries until the server listens (an attempt before that is refused at once).
timeout 120 rping -s -a "$ROCE_IP_B" -C 10 -v >"$work/rping-server.txt" 2>&1 &
rping_server=$!
vm_poll 60 timeout 30 rping -c -a "$ROCE_IP_B" -I "$ROCE_IP_A" -C 10 -v >"$work/rping.txt" 2>&1
wait "$rping_server"
t_eq "rping: 10 round trips over rdma_cm (server exit $?)" \
  "$(grep -c '^ping data: rdma-ping' "$work/rping.txt")" 10
step "rping done"

tagged_capture 3
roce_pods_down
step "priority 3 done"

# --- priority 5 ----------------------------------------------------------------------------------
if roce_pods_up "$cni_bin" 5; then
  t_pass "the pods again, with lossless priority 5"
  t_match "PF sets pod a's VF vlan 100, qos 5" 'vlan 100, qos 5' "$(ip link show "$ROCE_PF_A" | grep -E '^ +vf 1 ')"
  tagged_capture 5
else
  t_fail "setting up the pods (priority 5)"
fi
roce_pods_down
t_run "the RDMA rules are gone and the local table is back at pref 0" \
  bash -c '! ip rule show pref 10 | grep -q . && ip rule show pref 0 | grep -q local'
t_done
