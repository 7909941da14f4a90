# shellcheck shell=bash
# Shared by the hack/cluster scripts: paths, messages, the versions table. Sourced, not run.
# Its variables are used by the scripts that source it.
# shellcheck disable=SC2034

cluster_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$cluster_dir/../.." && pwd)
# Built binaries live outside the work tree, keyed by component and version, so that later runs,
# other checkouts and CI on the same machine skip the build.
cache_dir=${RDMANET_CLUSTER_CACHE:-/var/cache/rdmanet-cluster}
# Everything a running cluster owns: certificates, etcd's data, containerd's root, kubelet's dir.
state_dir=${RDMANET_CLUSTER_STATE:-/var/lib/rdmanet-cluster}
# Sockets and containerd's state: tmpfs, gone on reboot like the processes that use them.
run_dir=${RDMANET_CLUSTER_RUN:-/run/rdmanet-cluster}
go_bin=${GO:-/usr/local/go/bin/go}

die() {
  echo "cluster: $*" >&2
  exit 1
}
say() { echo "cluster: $*" >&2; }

# versions_line COMPONENT [VERSION]: prints "version module sum packages" of COMPONENT's line for
# VERSION (a leading v optional), or of its first line. Fails when there is none.
versions_line() {
  local want=${2:-} c v m s p
  [[ -z $want || $want == v* ]] || want=v$want
  while read -r c v m s p; do
    [[ -z $c || $c == \#* || $c != "$1" ]] && continue
    if [[ -z $want || $v == "$want" ]]; then
      echo "$v $m $s $p"
      return 0
    fi
  done <"$cluster_dir/versions"
  return 1
}

# The Kubernetes version this run uses: $K8S_VERSION (1.34.4 or v1.34.4) or the default.
k8s_version() {
  local line
  line=$(versions_line kubernetes "${K8S_VERSION:-}") ||
    die "no Kubernetes ${K8S_VERSION:-} in $cluster_dir/versions"
  echo "${line%% *}"
}
