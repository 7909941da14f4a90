#!/usr/bin/env bash
# Stops the cluster and removes everything it made: processes, pod sandboxes (through the CRI,
# so every CNI plugin gets its DEL: eth0's veth and lease, Multus's and rdmanet's attachments),
# mounts, network namespaces, cgroups, the bridge, the simulated node, and the state and run
# dirs. Safe to run twice, and after a crash at any point of `up`.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

# 1. Kubelet first, so that it does not restart what the next steps stop. VM nodes go whole:
#    their QEMU dies with run.sh, and nothing of theirs is on this machine but their taps.
stop_daemon kubelet 30
for p in "$pids"/vm[0-9].pid; do
  [[ -f $p ]] && stop_daemon "$(basename "$p" .pid)" 30
done
# 2. Pod sandboxes through the CRI while containerd runs: StopPodSandbox runs CNI DEL.
crictl=$(bin_dir cri-tools)/crictl
if daemon_pid containerd >/dev/null && [[ -x $crictl ]]; then
  cri=("$crictl" --runtime-endpoint "unix://$containerd_sock" --timeout 60s)
  mapfile -t sandboxes < <("${cri[@]}" pods -q 2>/dev/null)
  for s in "${sandboxes[@]}"; do
    "${cri[@]}" stopp "$s" >/dev/null 2>&1 || say "stopping pod sandbox $s failed"
    "${cri[@]}" rmp -f "$s" >/dev/null 2>&1 || true
  done
fi
for d in multus kube-scheduler kube-controller-manager containerd kube-apiserver etcd; do
  stop_daemon "$d"
done

# 3. What may outlive containerd: its shims and their containers (all in the cluster's cgroups).
shim=$(readlink -f "$(bin_dir containerd)/containerd-shim-runc-v2" 2>/dev/null || true)
for p in /proc/[0-9]*; do
  [[ -n $shim && $(readlink "$p/exe" 2>/dev/null) == "$shim" ]] && kill -KILL "${p#/proc/}" 2>/dev/null
done
cgroup_roots=()
for c in /sys/fs/cgroup/*/rdmanet-cluster /sys/fs/cgroup/unified/rdmanet-cluster; do
  [[ -d $c ]] && cgroup_roots+=("$c")
done
if ((${#cgroup_roots[@]})); then
  # Every task of every cgroup of the cluster's tree.
  find "${cgroup_roots[@]}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u |
    while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done
fi

# 4. Mounts under the cluster's dirs (pod volumes, netns, overlay rootfs, the dirs' own shared
#    bind mounts), deepest first.
for dir in "$state_dir" "$run_dir"; do
  findmnt -rn -o TARGET | grep -E "^$dir(/|$)" | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
done

# 5. cgroups, leaves first (a cgroup with tasks cannot go: step 3 killed them).
for c in "${cgroup_roots[@]}"; do
  for ((i = 0; i < 50; i++)); do
    find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [[ -d $c ]] || break
    sleep 0.1
  done
  [[ -d $c ]] && say "cgroup $c could not be removed"
done

# 6. The bridge (pods' host-side veths went with their netns), the simulated node, the dirs.
ip link del "$bridge" 2>/dev/null || true
# The VM nodes' taps and the data network's bridge (vmnodes.sh).
for l in /sys/class/net/rdmcm[0-9] /sys/class/net/rdmcd[0-9] /sys/class/net/rdmcd; do
  [[ -e $l ]] && ip link del "${l##*/}" 2>/dev/null
done
nft delete table ip "$nft_table" 2>/dev/null || true
if [[ -d $run_dir/simnode ]]; then
  "$repo/hack/simnode" down --root "$run_dir/simnode" >/dev/null 2>&1 || say "simnode down failed"
fi
# Shim sockets nothing listens on any more (a shim killed in step 3 leaves its socket): stale,
# whichever containerd's shim made them.
for s in /run/containerd/s/*; do
  [[ -S $s ]] || continue
  ss -xlnH | grep -qF " $s " || rm -f "$s"
done
# Host dirs that did not exist before up (up.sh lists them in host-dirs), deepest first. Only
# empty dirs go (the chart's DirectoryOrCreate volumes leave empty trees such as devinfo/dp),
# so nothing that another program has since put there is lost; kubelet's device-plugins dir
# holds only what kubelet and device plugins made: its checkpoint and sockets.
# The device nodes devnodes.sh made.
if [[ -f $state_dir/dev-nodes ]]; then
  while read -r n; do rm -f "$n"; done <"$state_dir/dev-nodes"
fi
if [[ -f $state_dir/host-dirs ]]; then
  if grep -qxF "$device_plugin_dir" "$state_dir/host-dirs"; then
    rm -f "$device_plugin_dir/kubelet_internal_checkpoint"
    find "$device_plugin_dir" -maxdepth 1 -type s -delete 2>/dev/null || true
  fi
  if grep -qxF /run/netns "$state_dir/host-dirs" && mountpoint -q /run/netns &&
    [[ -z $(ls -A /run/netns) ]]; then
    umount /run/netns
  fi
  # Trees only the node's CNI plugins and device plugin write (device-info, CNI state and
  # cache, pod info): made during this cluster's life, they go whole. The daemon leaves its
  # device-info files behind when it stops.
  for d in /run/k8s.cni.cncf.io /var/lib/cni /run/rdmanet; do
    grep -qxF "$d" "$state_dir/host-dirs" && rm -rf --one-file-system "$d"
  done
  sort -r "$state_dir/host-dirs" | while read -r d; do
    [[ -d $d ]] && find "$d" -depth -type d -empty -delete 2>/dev/null
    true
  done
fi
rm -rf --one-file-system "$state_dir" "$run_dir"
