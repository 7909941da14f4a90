#!/usr/bin/env bash
# `cluster up API`: each step is a script of its own; this one orders them and records what
# status.sh reports. On a failure the cluster is left as it stands, for its logs (<state>/logs):
# `cluster down` removes it.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
api=${1:?usage: up.sh deviceplugin|dra [VM-NODES]}
# 0: the node is this machine (a simulated one); N: the control plane stays here and the nodes
# are N VMs with real SR-IOV NICs (vmnodes.sh).
vm_count=${2:-0}
start=$SECONDS

"$cluster_dir/build.sh" >/dev/null
# A second up over a running cluster would mix two configurations.
if daemon_pid kube-apiserver >/dev/null; then
  die "a cluster is already up (hack/cluster/cluster down first)"
fi
umask 077
mkdir -p "$state_dir" "$run_dir"
chmod 700 "$state_dir" "$run_dir"
umask 022
for d in "${host_dirs[@]}"; do
  [[ -e $d ]] || echo "$d" >>"$state_dir/host-dirs"
done
# Pods mount parts of these dirs with HostToContainer propagation (Multus must see the pod
# netns containerd mounts later), which needs a shared mount: the host's / is private.
for d in "$state_dir" "$run_dir"; do
  mountpoint -q "$d" || mount --rbind "$d" "$d"
  mount --make-rshared "$d"
done
cat >"$state_dir/cluster.env" <<ENV
KUBECONFIG=$kubeconfig
k8s=$(k8s_version)
api=$api
workload-image=$workload_image
vm-nodes=$vm_count
ENV
((vm_count)) || echo "sysfs-root=$run_dir/simnode" >>"$state_dir/cluster.env"

"$cluster_dir/pki.sh"
"$cluster_dir/network.sh"
"$cluster_dir/control-plane.sh"
if ((vm_count)); then
  # The images first: each VM node imports the list at its boot.
  "$cluster_dir/images.sh"
  "$cluster_dir/multus.sh" image
  [[ ${RDMANET_CLUSTER_NO_RDMANET:-} == 1 ]] || "$cluster_dir/rdmanet.sh" image
  "$cluster_dir/vmnodes.sh" "$vm_count"
  "$cluster_dir/multus.sh"
  [[ ${RDMANET_CLUSTER_NO_RDMANET:-} == 1 ]] || "$cluster_dir/rdmanet.sh" "$api"
  say "cluster up in $((SECONDS - start)) s ($(k8s_version), $vm_count VM nodes)"
  echo "KUBECONFIG=$kubeconfig"
  exit 0
fi
"$cluster_dir/containerd.sh"
"$cluster_dir/images.sh"
"$cluster_dir/kubelet.sh"
"$cluster_dir/multus.sh"
if [[ ${RDMANET_CLUSTER_NO_RDMANET:-} != 1 ]]; then
  # The simulated node's NICs and GPUs (sysfs tree, veths, RDMA char devices); down.sh removes it.
  "$repo/hack/simnode" up --root "$run_dir/simnode" --ifprefix rc >/dev/null
  "$cluster_dir/devnodes.sh"
  "$cluster_dir/rdmanet.sh" "$api"
fi
say "cluster up in $((SECONDS - start)) s ($(k8s_version), api=$api)"
echo "KUBECONFIG=$kubeconfig"
