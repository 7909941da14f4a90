#!/usr/bin/env bash
# Boots the VM cluster's nodes (`cluster up --nodes N`) and waits until every one is Ready.
#
#   hack/cluster/vmnodes.sh N
#
# Node i (1..N, at most 8) is a QEMU guest of the project's VM harness (hack/vm/run.sh, topology
# hack/vm/topologies/cluster-node.sh) running hack/cluster/vmnode-guest.sh: containerd and
# kubelet at the pinned versions, registered as rdmanet-vm<i>. Its two NICs are host taps:
#   - rdmcm<i> on the cluster's bridge rdmc0, where the API server listens: the node's address
#     10.244.0.<1+i>; its pods (10.244.<i>.0/24) are routed through it;
#   - rdmcd<i>, the port of its igb SR-IOV NIC, on the bridge rdmcd, which plays the switch of
#     the data network: every node's RDMA frames cross it, so a capture on rdmcd is the wire.
# RDMANET_VM_ACCEL picks the accelerator (hack/vm/run.sh: tcg unless set); it is recorded in
# cluster.env (vm-accel=) for status.sh and the figures.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

n=${1:?usage: vmnodes.sh N}
[[ $n =~ ^[1-8]$ ]] || die "--nodes is 1 to 8, not $n"
data_bridge=rdmcd

nodes=()
for ((i = 1; i <= n; i++)); do nodes+=("rdmanet-vm$i"); done
"$cluster_dir/pki.sh" "${nodes[@]}"

if ! ip link show "$data_bridge" >/dev/null 2>&1; then
  ip link add "$data_bridge" type bridge
fi
# The switch forwards at once (no STP learning delay) and floods nothing to the host: it has
# no address of its own.
ip link set "$data_bridge" type bridge stp_state 0 forward_delay 0
ip link set "$data_bridge" up
for ((i = 1; i <= n; i++)); do
  for t in "rdmcm$i:$bridge" "rdmcd$i:$data_bridge"; do
    tap=${t%%:*}
    ip link show "$tap" >/dev/null 2>&1 || ip tuntap add dev "$tap" mode tap
    ip link set "$tap" master "${t#*:}" up
  done
  ip route replace "10.244.$i.0/24" via "10.244.0.$((1 + i))" dev "$bridge"
done
echo "vm-accel=${RDMANET_VM_ACCEL:-tcg}" >>"$state_dir/cluster.env"

for ((i = 1; i <= n; i++)); do
  # The VM lives until `cluster down` stops it; run.sh kills its QEMU when it is stopped.
  (
    export RDMANET_CLUSTER_VM_INDEX=$i RDMANET_CLUSTER_VM_COUNT=$n
    export RDMANET_CLUSTER_STATE=$state_dir RDMANET_CLUSTER_RUN=$run_dir
    export RDMANET_VM_OUT_DIR=$logs/vm$i
    start_daemon "vm$i" "$(command -v bash)" "$repo/hack/vm/run.sh" \
      --topology "$repo/hack/vm/topologies/cluster-node.sh" --timeout 86400 \
      "$cluster_dir/vmnode-guest.sh"
  )
done
node_ready() {
  [[ $(kc get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}
for ((i = 1; i <= n; i++)); do
  wait_for 600 "vm$i" node_ready "rdmanet-vm$i"
done
say "${#nodes[@]} VM node(s) Ready (${RDMANET_VM_ACCEL:-tcg}): ${nodes[*]}"
