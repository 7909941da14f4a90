#!/usr/bin/env bash
# vm test: the pre-flight Job's script (manifests/examples/preflight/run.sh, the file the
# example's ConfigMap carries) against real GID tables: two pods with VFs through rdmanet and
# Soft-RoCE over them (hack/vm/roce_pods.sh); from pod a, the script finds the RoCE v2 GID of
# its address in the kernel's table, says FAIL for an address without one; its ib_write_bw step
# runs against pod b and judges the bandwidth against the port's line rate: FAIL at the real 90%
# threshold (TCG is slow), PASS at a threshold TCG can meet, each with its exit code.
#
#   preflight.sh CNI_BIN
set -u
cni_bin=$(readlink -f "${1:?usage: preflight.sh CNI_BIN}")
script=$(cd "$(dirname "$0")/../../manifests/examples/preflight" && pwd)/run.sh
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
# shellcheck source=hack/vm/roce_pods.sh
source "$RDMANET_VM_DIR/roce_pods.sh"
work=$(mktemp -d /tmp/preflight-test.XXXXXX)
trap 'roce_pods_down; rm -rf "$work"' EXIT

if ! roce_pods_up "$cni_bin" 3; then
  t_fail "setting up the pods"
  t_done
  exit
fi
in_pod() { # NS DEV IP ARGS...: the script as that pod's container runs it
  ip netns exec "$1" env NCCL_IB_HCA="=$2" PREFLIGHT_IP="$3" PREFLIGHT_PORT=18600 \
    PREFLIGHT_BW_ARGS="-s 65536 -n 300" ${PERCENT:+PREFLIGHT_BW_PERCENT=$PERCENT} \
    timeout 120 bash "$script" "${@:4}"
}

out=$(in_pod "$ROCE_NS_A" "$ROCE_DEV_A" "$ROCE_IP_A" gid 2>&1)
echo "$out"
t_match "GID lookup in $ROCE_DEV_A's table finds index $ROCE_GID_A" \
  "^hca=$ROCE_DEV_A gid-index=$ROCE_GID_A line-rate=[0-9.]+Gb/s$" "$out"
out=$(in_pod "$ROCE_NS_A" "$ROCE_DEV_A" 10.99.99.99 gid 2>&1)
t_eq "an address without a GID: exit 1" "$?" 1
t_match "an address without a GID: FAIL line" "^FAIL: no RoCE v2 GID for 10.99.99.99 on $ROCE_DEV_A" "$out"

# bw PERCENT: one ib_write_bw run through the script; its output in $out, exit code in $rc.
bw() {
  PERCENT=$1 in_pod "$ROCE_NS_B" "$ROCE_DEV_B" "$ROCE_IP_B" bw-server >"$work/server.txt" 2>&1 &
  local server=$!
  roce_wait_tcp "$ROCE_NS_B" 18600
  rc=0
  out=$(PERCENT=$1 in_pod "$ROCE_NS_A" "$ROCE_DEV_A" "$ROCE_IP_A" bw "$ROCE_POD_IP_B" 2>&1) || rc=$?
  wait "$server"
  grep -E '^hca=|^ib_write_bw:' <<<"$out"
}
bw 90
t_eq "at 90% of the line rate under TCG: exit 1" "$rc" 1
t_match "at 90%: a FAIL verdict with the measured figure" \
  '^ib_write_bw: [0-9.]+ Gb/s, need >= 90% of [0-9.]+ Gb/s: FAIL$' "$out"
bw 0.01
t_eq "at 0.01% of the line rate: exit 0" "$rc" 0
t_match "at 0.01%: a PASS verdict" '^ib_write_bw: [0-9.]+ Gb/s, need >= 0.01% of [0-9.]+ Gb/s: PASS$' "$out"
t_done
