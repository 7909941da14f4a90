#!/usr/bin/env bash
# helm post-renderer (stdin: the rendered manifests, stdout: them changed): points the rdmanet
# DaemonSet's host /sys volume at the simulated node's sysfs tree, $RDMANET_CLUSTER_SYSFS.
# The chart has no value for it (a real node has one sysfs), and this machine has no RDMA NICs.
set -euo pipefail
sysfs=${RDMANET_CLUSTER_SYSFS:?RDMANET_CLUSTER_SYSFS names the simulated sysfs}
# The only hostPath of /sys in the chart is the `sys` volume.
sed "s#^\([[:space:]]*\)path: /sys\$#\1path: $sysfs#"
