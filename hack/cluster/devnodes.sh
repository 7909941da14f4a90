#!/usr/bin/env bash
# Makes the simulated node's RDMA char devices real device nodes under /dev/infiniband: the
# device plugin hands out /dev/infiniband/uverbsN, umadN, issmN and rdma_cm, and containerd
# lstat()s each host path for its major:minor before a container starts ("lstat
# /dev/infiniband/uverbs2: no such file or directory" otherwise). The numbers are those the
# simulated sysfs gives (infiniband_verbs/*/dev, infiniband_mad/*/dev); with no RDMA driver on
# the host, opening one fails (ENXIO), but it exists, and the device cgroup rule is the real one.
# Lists what it made in <state>/dev-nodes, for down.sh.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

sys=$run_dir/simnode/sys/class
mkdir -p /dev/infiniband
make_node() { # NAME MAJOR:MINOR MODE
  local path=/dev/infiniband/$1
  [[ -e $path ]] && return 0
  mknod -m "$3" "$path" c "${2%%:*}" "${2##*:}"
  echo "$path" >>"$state_dir/dev-nodes"
}
for d in "$sys"/infiniband_verbs/uverbs* "$sys"/infiniband_mad/umad* "$sys"/infiniband_mad/issm*; do
  [[ -f $d/dev ]] || continue
  # udev's modes for them: verbs open to all, MAD and SM ports to root.
  mode=0600
  [[ ${d##*/} == uverbs* ]] && mode=0666
  make_node "${d##*/}" "$(<"$d/dev")" "$mode"
done
# rdma_cm is a misc device (10) with a dynamic minor; 10:254 is none the host uses here.
make_node rdma_cm 10:254 0666
