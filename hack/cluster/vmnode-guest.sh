#!/usr/bin/env bash
# A VM node's life, inside its guest (hack/vm/run.sh runs it; hack/cluster/vmnodes.sh boots it):
# the management NIC on the host's bridge, the pods' network and its routes to the other nodes,
# then the same containerd, images and kubelet steps the host's node runs, with this node's name,
# address and pod network. It then stays up until the VM is killed (`cluster down`).
#
# The guest's / is the host's, read-only under a tmpfs overlay, so the cluster's scripts and
# binaries are at their host paths. The cluster's state and run dirs get fresh tmpfs mounts here,
# at the host's paths too, since the chart's and Multus's hostPath volumes name those paths. What
# the node needs from the host's state (the CA, its kubelet's kubeconfig, the image list) is
# copied out of the host's state dir first, from under the mount.
#
# Environment (vmnodes.sh sets it; run.sh passes RDMANET_* into the guest):
#   RDMANET_CLUSTER_VM_INDEX  this node's index i (1..8): name rdmanet-vm<i>, management address
#                             10.244.0.<1+i>, pods on 10.244.<i>.0/24
#   RDMANET_CLUSTER_VM_COUNT  how many VM nodes there are (routes to their pods)
set -euo pipefail
i=${RDMANET_CLUSTER_VM_INDEX:?} n=${RDMANET_CLUSTER_VM_COUNT:?}
export RDMANET_CLUSTER_NODE=rdmanet-vm$i
export RDMANET_CLUSTER_NODE_IP=10.244.0.$((1 + i))
export RDMANET_CLUSTER_POD_CIDR=10.244.$i.0/24
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

say "node $node_name: $node_ip, pods on $pod_cidr"
# What this node takes from the host's state, before the tmpfs hides it.
seed=$(mktemp -d)
cp "$pki/ca.crt" "$seed/"
cp "$pki/kubelet-$node_name.kubeconfig" "$seed/kubelet.kubeconfig"
cp "$kubeconfig" "$seed/admin.kubeconfig"
cp "$state_dir/images" "$seed/images"
cp "$state_dir/cluster.env" "$seed/cluster.env"
mount -t tmpfs -o mode=0700 tmpfs "$state_dir"
mkdir -p "$run_dir" && mount -t tmpfs -o mode=0700 tmpfs "$run_dir"
mkdir -p "$pki" "$logs" "$pids"
install -m 0600 "$seed/ca.crt" "$seed/kubelet.kubeconfig" "$pki/"
install -m 0600 "$seed/admin.kubeconfig" "$kubeconfig"
install -m 0600 "$seed/images" "$seed/cluster.env" "$state_dir/"
rm -rf "$seed"
# Pods mount parts of these dirs with HostToContainer propagation (as up.sh does on the host).
mount --make-rshared "$state_dir"
mount --make-rshared "$run_dir"
# On a failure, the node's daemon logs reach the host (run.sh copies RDMANET_VM_OUT to
# <state>/logs/vm<i>/ after the power-off); the guest's own disk vanishes with it.
trap 'cp -r "$logs" "$RDMANET_VM_OUT/" 2>/dev/null' EXIT

# The management NIC: the virtio one (the igb ports are the data network's).
mgmt=
for d in /sys/class/net/*; do
  [[ $(readlink -f "$d/device/driver" 2>/dev/null) == */virtio_net ]] && mgmt=${d##*/}
done
[[ -n $mgmt ]] || die "no virtio management NIC"
ip addr add "$node_ip/24" dev "$mgmt"
ip link set "$mgmt" up
wait_for 30 "carrier on $mgmt" grep -qx 1 "/sys/class/net/$mgmt/carrier"
sysctl -qw net.ipv4.ip_forward=1
for ((j = 1; j <= n; j++)); do
  ((j == i)) || ip route replace "10.244.$j.0/24" via "10.244.0.$((1 + j))" dev "$mgmt"
done

# The same steps as the host's node (up.sh), for this node.
"$cluster_dir/network.sh"
"$cluster_dir/containerd.sh"
while read -r name archive; do
  "$(bin_dir containerd)/ctr" --address "$containerd_sock" -n k8s.io images import --local \
    --index-name "$name" "$archive" >/dev/null
done <"$state_dir/images"
# Multus's shim and the dirs its DaemonSet mounts (multus.sh makes them on the host's node).
install -m 0755 "$(bin_dir multus)/multus-shim" "$cni_bin/multus-shim"
mkdir -p "$run_dir/multus" "$state_dir/multus"
# cgroup v2 here: kubelet's cgroup root, with every controller the kernel has (kubelet refuses a
# root that lacks one it manages, hugetlb included).
mkdir -p /sys/fs/cgroup/rdmanet-cluster
for c in $(</sys/fs/cgroup/cgroup.controllers); do
  echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control
done
"$cluster_dir/kubelet.sh"
say "node $node_name is Ready"
# Until `cluster down` kills the VM: nothing here ends on its own.
exec sleep infinity
