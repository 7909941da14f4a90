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

# The Kubernetes version this run uses: $K8S_VERSION (1.35.8 or v1.35.8), else the running
# cluster's (so that status, kubectl and down match what up started), else the default.
k8s_version() {
  local line want=${K8S_VERSION:-}
  if [[ -z $want && -f $state_dir/cluster.env ]]; then
    want=$(sed -n 's/^k8s=//p' "$state_dir/cluster.env")
  fi
  line=$(versions_line kubernetes "$want") ||
    die "no Kubernetes ${K8S_VERSION:-} in $cluster_dir/versions"
  echo "${line%% *}"
}

# The cluster's layout. One state dir (0700) holds what must stay private (keys) and what only
# this cluster uses, so that `down` removes one tree and never touches Docker's or a host
# kubelet's files.
pki=$state_dir/pki
logs=$state_dir/logs
pids=$run_dir/pids
kubeconfig=$state_dir/admin.kubeconfig
kubelet_dir=$state_dir/kubelet
cni_bin=$state_dir/cni/bin
cni_conf=$state_dir/cni/net.d
cdi_dir=$run_dir/cdi
containerd_sock=$run_dir/containerd.sock
node_name=${RDMANET_CLUSTER_NODE:-rdmanet-node}
# The control plane's address: on a bridge of the cluster's own (the host node's pods' eth0
# network), since the API server must advertise an address that is not loopback and the host's
# own may not be used.
bridge=rdmc0
apiserver_ip=10.244.0.1
# This node's address and its pods' network: the host's by default. A VM node (vmnodes.sh) has
# its management NIC on the host's bridge at 10.244.0.<1+i> and its pods on 10.244.<i>.0/24
# behind a bridge of its own, routed between the nodes.
node_ip=${RDMANET_CLUSTER_NODE_IP:-$apiserver_ip}
pod_cidr=${RDMANET_CLUSTER_POD_CIDR:-10.244.0.0/24}
pod_gw=${pod_cidr%.*}.1
service_cidr=10.96.0.0/24
nft_table=rdmanet_cluster
apiserver_port=16443
etcd_client_port=23790
etcd_peer_port=23800
# Images are imported, never pulled (images.sh); kubelet and the CRI normalize a bare name to
# docker.io/library/NAME, so imports carry full names.
pause_image=rdmanet.local/pause:1
workload_image=rdmanet.local/workload:1
# The PATH of the images built here: busybox's applets last, after iproute2's ip.
workload_path=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/busybox
# Fixed host paths that Multus, rdmanet and containerd's shims (their sockets) use: up.sh notes
# which of them it made, for down.sh.
# /var/lib/cni/results is libcni's cache, which containerd's CRI does not let us move. Kubelet's
# device manager serves /var/lib/kubelet/device-plugins/kubelet.sock whatever its --root-dir
# (a constant of the device plugin API), so device plugins are found there.
# iproute2 makes /run/netns a mount point of itself for the simulated node's netns.
host_dirs=(/run/k8s.cni.cncf.io /var/lib/cni/rdmanet /var/lib/cni/results /var/lib/cni
  /run/containerd/s /run/containerd/fifo /run/containerd /run/rdmanet
  /var/lib/kubelet/device-plugins /var/lib/kubelet /run/netns /dev/infiniband)
device_plugin_dir=/var/lib/kubelet/device-plugins

# start_daemon NAME BINARY ARGS...: starts BINARY in a session of its own, output to
# logs/NAME.log, and records its pid. A second start of a running daemon is a no-op.
start_daemon() {
  local name=$1
  shift
  if daemon_pid "$name" >/dev/null; then return 0; fi
  mkdir -p "$logs" "$pids"
  setsid "$@" </dev/null >>"$logs/$name.log" 2>&1 &
  echo "$! $1" >"$pids/$name.pid"
}

# daemon_pid NAME: prints the pid of NAME when it still runs the binary it was started with
# (a recycled pid that now runs something else is not ours to signal). A binary replaced since,
# by a rebuild of the cache, shows as "<path> (deleted)" and is still ours.
daemon_pid() {
  local pid bin exe
  read -r pid bin 2>/dev/null <"$pids/$1.pid" || return 1
  [[ -n $pid ]] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  bin=$(readlink -f "$bin")
  [[ $exe == "$bin" || $exe == "$bin (deleted)" ]] || return 1
  echo "$pid"
}

# stop_daemon NAME [SECONDS]: SIGTERM, then SIGKILL after SECONDS (default 10).
stop_daemon() {
  local pid i
  if pid=$(daemon_pid "$1"); then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < ${2:-10} * 10; i++)); do
      [[ -d /proc/$pid ]] || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    while [[ -d /proc/$pid ]] && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) ]]; do sleep 0.1; done
  fi
  rm -f "$pids/$1.pid"
}

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s until it succeeds; fails naming
# WHAT after SECONDS. When WHAT is a daemon start_daemon started, fails as soon as it exits, with
# the end of its log.
wait_for() {
  local secs=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    # (Not daemon_pid: until setsid has exec'd the binary, the process runs another one.)
    if [[ -f $pids/$what.pid ]] && ! kill -0 "$(cut -d' ' -f1 "$pids/$what.pid")" 2>/dev/null; then
      tail -n 20 "$logs/$what.log" >&2 2>/dev/null || true
      die "$what exited (log: $logs/$what.log)"
    fi
    ((SECONDS < deadline)) || die "$what did not come up within ${secs}s (logs: $logs)"
    sleep 0.2
  done
}

# bin_dir COMPONENT [VERSION]: the cached build's bin dir (hack/cluster/build.sh makes it).
bin_dir() {
  local ver
  read -r ver _ < <(versions_line "$1" "${2:-}") || die "$1 ${2:-} is not in versions"
  echo "$cache_dir/$1-$ver/bin"
}
k8s_bin() { bin_dir kubernetes "$(k8s_version)"; }

# import_image NAME ARCHIVE: imports the OCI archive into this node's containerd under NAME, when
# one runs here, and lists it in <state>/images, which every VM node imports at its boot.
import_image() {
  if daemon_pid containerd >/dev/null; then
    "$(bin_dir containerd)/ctr" --address "$containerd_sock" -n k8s.io images import --local \
      --index-name "$1" "$2" >/dev/null
  fi
  touch "$state_dir/images"
  grep -qxF "$1 $2" "$state_dir/images" || echo "$1 $2" >>"$state_dir/images"
}

# vm_nodes: how many VM nodes the running cluster has (`cluster up --nodes N`), 0 for the one
# node on this machine.
vm_nodes() { sed -n 's/^vm-nodes=//p' "$state_dir/cluster.env" 2>/dev/null | grep . || echo 0; }

# kubectl with the admin kubeconfig.
kc() { "$(k8s_bin)/kubectl" --kubeconfig "$kubeconfig" "$@"; }
