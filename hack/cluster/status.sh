#!/usr/bin/env bash
# Says what runs, one key=value a line:
#   state=up|down|partial, KUBECONFIG=, k8s=, api=, workload-image=, sysfs-root=, and one
#   <daemon>=running|stopped line per process, node=<Ready status>, multus= and rdmanet= (the
#   DaemonSets' ready pods).
# Exits 0 when every process runs, 1 otherwise.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

daemons=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet)
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
  echo "node=$(kc get node "$node_name" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || echo unknown)"
  echo "multus=$(kc -n kube-system get ds kube-multus-ds -o 'jsonpath={.status.numberReady}' \
    2>/dev/null || echo none)"
  echo "rdmanet=$(kc -n rdmanet get ds -o 'jsonpath={.items[0].status.numberReady}' \
    2>/dev/null || echo none)"
fi
((running == ${#daemons[@]}))
