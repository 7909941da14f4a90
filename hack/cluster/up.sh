#!/usr/bin/env bash
# `cluster up API`: each step is a script of its own; this one orders them and records what
# status.sh reports. On a failure the cluster is left as it stands, for its logs (<state>/logs):
# `cluster down` removes it.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
api=${1:?usage: up.sh deviceplugin|dra}
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
cat >"$state_dir/cluster.env" <<ENV
KUBECONFIG=$kubeconfig
k8s=$(k8s_version)
api=$api
workload-image=$workload_image
sysfs-root=$run_dir/simnode
ENV

"$cluster_dir/pki.sh"
"$cluster_dir/network.sh"
"$cluster_dir/control-plane.sh"
"$cluster_dir/containerd.sh"
"$cluster_dir/images.sh"
"$cluster_dir/kubelet.sh"
say "cluster up in $((SECONDS - start)) s ($(k8s_version), api=$api)"
echo "KUBECONFIG=$kubeconfig"
