#!/usr/bin/env bash
# Says what runs, one key=value a line:
#   state=up|down|partial, KUBECONFIG=, k8s=, api=, workload-image=, vm-nodes=, sysfs-root= (the
#   simulated node) or vm-accel= (tcg or kvm: what the VM nodes run under), and one
#   <daemon>=running|stopped line per process, node=<Ready status> (or one vm<i>=<QEMU
#   running|stopped>,<Ready status> line per VM node), multus= and rdmanet= (the DaemonSets'
#   ready pods).
# Exits 0 when every process runs, 1 otherwise.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

daemons=(etcd kube-apiserver kube-controller-manager kube-scheduler)
# The node's own daemons run here only when this machine is the node; VM nodes are vm<i> lines.
(($(vm_nodes) == 0)) && daemons+=(containerd kubelet)
running=0
lines=()
for d in "${daemons[@]}"; do
  if daemon_pid "$d" >/dev/null; then
    lines+=("$d=running") && running=$((running + 1))
  else
    lines+=("$d=stopped")
  fi
done
if ((running == ${#daemons[@]})); then
  echo state=up
elif ((running == 0)); then
  echo state=down
else
  echo state=partial
fi
# What `up` recorded about this cluster (the version and API it was started with).
[[ -f $state_dir/cluster.env ]] && cat "$state_dir/cluster.env"
printf '%s\n' "${lines[@]}"
if daemon_pid kube-apiserver >/dev/null; then
  if (($(vm_nodes) == 0)); then
    echo "node=$(kc get node "$node_name" \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || echo unknown)"
  else
    # One line per VM node: vm<i>=<its QEMU's state>,<Ready status>.
    for ((i = 1; i <= $(vm_nodes); i++)); do
      q=stopped
      daemon_pid "vm$i" >/dev/null && q=running
      echo "vm$i=$q,$(kc get node "rdmanet-vm$i" \
        -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || echo unknown)"
    done
  fi
  echo "multus=$(kc -n kube-system get ds kube-multus-ds -o 'jsonpath={.status.numberReady}' \
    2>/dev/null || echo none)"
  echo "rdmanet=$(kc -n rdmanet get ds -o 'jsonpath={.items[0].status.numberReady}' \
    2>/dev/null || echo none)"
fi
((running == ${#daemons[@]}))
