#!/usr/bin/env bash
# Starts kubelet against the cluster's containerd and waits until the node is Ready.
#
# - Its root dir is <state>/kubelet (Multus, which reads the pod-resources socket at the fixed
#   path /var/lib/kubelet/pod-resources, runs in a pod that mounts it there).
# - Its pods' cgroups live under a cgroup root of their own (/rdmanet-cluster, in every v1
#   hierarchy), so that down.sh removes one subtree and nothing of Docker's.
# - cgroup v1 (`stat -fc %T /sys/fs/cgroup` = tmpfs): kubelet >= 1.35 refuses to start there
#   unless failCgroupV1 is false (KEP-5573).
# - topologyManagerPolicy single-numa-node and the static CPU manager, as a node running RDMA
#   training pods would.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=hack/cluster/gates.sh
. "$cluster_dir/gates.sh"

k8s=$(k8s_bin)
mkdir -p "$kubelet_dir"

cgroup_v1=false
[[ $(stat -fc %T /sys/fs/cgroup) == tmpfs ]] && cgroup_v1=true
if [[ $cgroup_v1 == true ]]; then
  for c in /sys/fs/cgroup/*/; do
    [[ -d $c && ! -L ${c%/} && $c != */unified/ ]] && mkdir -p "$c/rdmanet-cluster"
  done
fi

# featureGates as a YAML flow map: {A: true, B: true}
gate_yaml=$(gates kubelet | sed 's/=/: /g; s/,/, /g')
cat >"$state_dir/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$pki/ca.crt"}
authorization: {mode: Webhook}
address: "$node_ip"
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
containerRuntimeEndpoint: "unix://$containerd_sock"
cgroupDriver: cgroupfs
cgroupRoot: /rdmanet-cluster
failCgroupV1: $([[ $cgroup_v1 == true ]] && echo false || echo true)
cpuManagerPolicy: static
# The static policy needs some CPU reserved. 100m (not a whole CPU: reservedSystemCPUs) leaves
# 1.9 of this machine's 2 CPUs allocatable, so a Guaranteed pod gets one exclusive CPU beside
# the DaemonSets' requests; the policy still keeps one CPU in the shared pool.
kubeReserved: {cpu: 100m}
topologyManagerPolicy: single-numa-node
topologyManagerScope: container
failSwapOn: false
# The disk is shared with builds: evicting pods for a fuller disk would make tests flaky.
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
resolvConf: /etc/resolv.conf
featureGates: {$gate_yaml}
YAML

start_daemon kubelet "$k8s/kubelet" --config "$state_dir/kubelet.yaml" \
  --kubeconfig "$pki/kubelet.kubeconfig" --root-dir "$kubelet_dir" \
  --cert-dir "$kubelet_dir/pki" --hostname-override "$node_name" --node-ip "$node_ip" \
  --v 1
node_ready() {
  [[ $(kc get node "$node_name" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}
wait_for 120 "node $node_name" node_ready
