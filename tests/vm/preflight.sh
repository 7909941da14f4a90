#!/usr/bin/env bash
# vm test: the pre-flight Job's script (manifests/examples/preflight/run.sh, the file the
# example's ConfigMap carries) over Soft-RoCE between two pods with VFs through rdmanet
# (hack/vm/roce_pods.sh). The script's check is rdmanet's RDMA probe; as in probe_pods.sh it runs
# in the initial netns bound to the rxe slaves' addresses (ROCE_IP_A/B), where Soft-RoCE can
# carry it, with the env the device plugin injects (NCCL_IB_HCA, NCCL_IB_TC, NCCL_IB_SL).
#   - the GID lookup finds the RoCE v2 GID of the pod's address; an address without one is a FAIL
#     line and exit 1, before any probe runs;
#   - PASS: ping-pongs through `rdmanet-device-plugin doctor probe` (the image's one binary) with
#     the pool's TOS: exit 0, the JSON verdict PASS, DSCP 26 used and matched;
#   - FAIL: the RDMA-write phase (`rdmanet-doctor probe --bandwidth`) under TCG misses 90% of the
#     port's rate: exit 1, the JSON names the measured figure;
#   - FAIL: pods whose TOS (NCCL_IB_TC 104, DSCP 26) is not the fabric's lossless DSCP
#     (PREFLIGHT_DSCP 46): exit 1, the mismatch as evidence;
#   - the opt-in perftest run (ib_write_bw from pod a's netns, its TCP exchange over the pods'
#     network) still judges against the line rate: PASS at a threshold TCG can meet.
#
#   preflight.sh CNI_BIN DOCTOR DEVICE_PLUGIN
set -u
usage="usage: preflight.sh CNI_BIN DOCTOR DEVICE_PLUGIN"
cni_bin=$(readlink -f "${1:?$usage}")
doctor=$(readlink -f "${2:?$usage}")
dp=$(readlink -f "${3:?$usage}")
script=$(cd "$(dirname "$0")/../../manifests/examples/preflight" && pwd)/run.sh
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
# shellcheck source=hack/vm/roce_pods.sh
source "$RDMANET_VM_DIR/roce_pods.sh"
roce_test_begin preflight-test "$cni_bin" 3
# run_as DEV IP ARGS...: the script with the env the device plugin gives a pod of the pool (TOS
# 104: DSCP 26, priority 3); PROBE, PROBE_ARGS, DSCP and PERCENT override the probe command, its
# flags, the DSCP the check expects and perftest's threshold. NS=netns: inside that pod's netns.
run_as() {
  local pre=()
  [[ -n ${NS:-} ]] && pre=(ip netns exec "$NS")
  "${pre[@]}" env NCCL_IB_HCA="=$1" NCCL_IB_TC=104 NCCL_IB_SL=3 PREFLIGHT_IP="$2" \
    PREFLIGHT_PORT=18600 PREFLIGHT_PROBE="${PROBE:-$doctor probe}" \
    PREFLIGHT_PROBE_ARGS="${PROBE_ARGS:---count 50}" ${DSCP:+PREFLIGHT_DSCP=$DSCP} \
    PREFLIGHT_BW_ARGS="-s 65536 -n 300 -u 20" ${PERCENT:+PREFLIGHT_BW_PERCENT=$PERCENT} \
    timeout 240 bash "$script" "${@:3}"
}

out=$(run_as "$ROCE_DEV_A" "$ROCE_IP_A" gid 2>&1)
echo "$out"
t_match "GID lookup in $ROCE_DEV_A's table finds index $ROCE_GID_A" \
  "^hca=$ROCE_DEV_A gid-index=$ROCE_GID_A line-rate=[0-9.]+Gb/s$" "$out"
out=$(run_as "$ROCE_DEV_A" 10.99.99.99 probe "$ROCE_IP_B" 2>&1)
t_eq "probe from an address without a GID: exit 1" "$?" 1
t_match "an address without a GID: FAIL line" "^FAIL: no RoCE v2 GID for 10.99.99.99 on $ROCE_DEV_A" "$out"

# probe PROBE_ARGS: one probe through the script, the server on pod b's address (one client);
# the client's output in $out, its JSON in $json, its exit code in $rc.
probe() {
  : >"$work/server.log"
  run_as "$ROCE_DEV_B" "$ROCE_IP_B" probe-server >"$work/server.log" 2>&1 &
  server=$!
  vm_poll 30 grep -q 'listening on' "$work/server.log" || t_fail "probe server: $(cat "$work/server.log")"
  rc=0
  out=$(PROBE_ARGS=$1 run_as "$ROCE_DEV_A" "$ROCE_IP_A" probe "$ROCE_IP_B" 2>&1) || rc=$?
  wait "$server"
  server=
  json=$(grep -v -e '^hca=' -e '^rdmanet probe ' <<<"$out")
  grep -E '^hca=|^rdmanet probe ' <<<"$out"
  jq -c '{verdict, device, gid_index, traffic_class, dscp_match, rtt: .rtt_us.count, bandwidth, problems}' <<<"$json"
}
j() { jq -r "$1" <<<"$json"; }

PROBE="$dp doctor probe" probe "--count 50"
t_eq "PASS case (rdmanet-device-plugin doctor probe): exit 0" "$rc" 0
t_match "PASS case: verdict line" "^rdmanet probe $ROCE_IP_A -> $ROCE_IP_B via $ROCE_DEV_A: PASS$" "$out"
t_eq "PASS case: JSON verdict" "$(j .verdict)" PASS
t_eq "PASS case: GID index of $ROCE_IP_A" "$(j .gid_index)" "$ROCE_GID_A"
t_eq "PASS case: traffic class 104 (the pool's TOS)" "$(j .traffic_class)" 104
t_eq "PASS case: DSCP matches the pool's" "$(j .dscp_match)" true
t_eq "PASS case: 50 ping-pongs" "$(j .rtt_us.count)" 50

probe "--count 50 --bandwidth"
t_eq "bandwidth under TCG: exit 1" "$rc" 1
t_match "bandwidth: FAIL verdict line" "via $ROCE_DEV_A: FAIL \\(exit 1\\)$" "$out"
t_eq "bandwidth: JSON verdict" "$(j .verdict)" FAIL
t_match "bandwidth: the measured figure as evidence" \
  '^RDMA write [0-9.]+ Gbit/s is below 90% of the port.s [0-9.]+ Gbit/s$' "$(j '.problems[0]')"

DSCP=46 probe "--count 20"
t_eq "pods' TOS off the lossless DSCP: exit 1" "$rc" 1
t_eq "off DSCP: the traffic class used is the pods' TOS" "$(j .traffic_class)" 104
t_match "off DSCP: the mismatch as evidence" "carries DSCP 26, not the pool's DSCP 46" "$(j '.problems[0]')"

# The opt-in perftest run: ib_write_bw from the pods' netns.
NS=$ROCE_NS_B PERCENT=0.01 run_as "$ROCE_DEV_B" "$ROCE_IP_B" bw-server >"$work/bw-server.txt" 2>&1 &
server=$!
roce_wait_tcp "$ROCE_NS_B" 18600
rc=0
out=$(NS=$ROCE_NS_A PERCENT=0.01 run_as "$ROCE_DEV_A" "$ROCE_IP_A" bw "$ROCE_POD_IP_B" 2>&1) || rc=$?
wait "$server"
server=
grep -E '^hca=|^ib_write_bw:' <<<"$out"
t_eq "perftest (opt-in) at 0.01% of the line rate: exit 0" "$rc" 0
t_match "perftest: a PASS verdict" '^ib_write_bw: [0-9.]+ Gb/s, need >= 0.01% of [0-9.]+ Gb/s: PASS$' "$out"
t_done
