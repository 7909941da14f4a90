#!/usr/bin/env bash
# Starts the cluster's own containerd: its config, root, state, socket, runc root, netns mounts
# and CNI dirs are all the cluster's (<state>/containerd, <run>/...), so it never shares
# anything with Docker's containerd. The CRI plugin runs pods with Debian's runc, cgroupfs
# (this machine boots with cgroup v1 and no systemd), CDI on (the device plugin's and DRA
# driver's specs under <run>/cdi) and the overlayfs snapshotter.
#
# One path is fixed in containerd: the shims' sockets go to /run/containerd/s/<hash of our
# socket and the container>, beside Docker's; they are removed when the shims exit.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

bin=$(bin_dir containerd)
command -v runc >/dev/null || die "runc is missing (hack/install-deps.sh)"
mkdir -p "$state_dir/containerd" "$run_dir/containerd" "$cdi_dir" "$cni_bin" "$cni_conf"
cat >"$state_dir/containerd.toml" <<TOML
# Version 4: containerd 2.4's own (hack/cluster/versions pins it); 3 would be migrated.
version = 4
root = "$state_dir/containerd"
state = "$run_dir/containerd"
# Not the host's /etc/containerd/conf.d: this containerd takes nothing from Docker's config.
imports = []

[plugins]
  # Config version 4 sets the servers' addresses here. The defaults are Docker's containerd's
  # (/run/containerd/containerd.sock): every address must be the cluster's own or off.
  [plugins.'io.containerd.server.v1.grpc']
    address = "$containerd_sock"
  [plugins.'io.containerd.server.v1.ttrpc']
    address = "$containerd_sock.ttrpc"
  [plugins.'io.containerd.server.v1.grpc-tcp']
    address = ""
  [plugins.'io.containerd.server.v1.debug']
    address = ""
  [plugins.'io.containerd.server.v1.metrics']
    address = ""
  # Plugins whose defaults are global paths: NRI's socket, /opt/containerd, the image
  # verifiers' bin dir.
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
  [plugins.'io.containerd.internal.v1.opt']
    path = "$state_dir/containerd-opt"
  [plugins.'io.containerd.image-verifier.v1.bindir']
    bin_dir = "$state_dir/containerd-verifiers"

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    # Images come only from imports (images.sh): nothing is pulled.
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$pause_image"

  [plugins.'io.containerd.cri.v1.runtime']
    # This machine withholds CAP_SYS_RESOURCE, so a container may not lower its oom_score_adj
    # below containerd's own (kubelet asks -998 for sandboxes): runc then fails with "can't get
    # final child's PID from pipe". Restricted, the score is raised to containerd's.
    restrict_oom_score_adj = true
    # CDI is always on in containerd 2.x; specs only from the cluster's dir.
    cdi_spec_dirs = ["$cdi_dir"]
    # Pods' netns under our state dir, not /var/run/netns.
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "$(command -v runc)"
          Root = "$run_dir/runc"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["$cni_bin"]
      conf_dir = "$cni_conf"
      max_conf_num = 1

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
TOML

# containerd finds its shim on PATH.
PATH="$bin:$PATH" start_daemon containerd "$bin/containerd" \
  --config "$state_dir/containerd.toml" --log-level warn
wait_for 30 containerd "$bin/ctr" --address "$containerd_sock" version
