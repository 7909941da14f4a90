#!/usr/bin/env bash
# integration: the chain a pod goes through under Multus, with the real binaries on the simulated
# node. kubelet (the stand-in) calls the device plugin's Allocate for one VF of a pool with a pod
# info directory; Multus's delegate call follows: rdmanet ADD with the netconf Multus builds from
# the chart's NAD (capabilities, deviceID and pciBusID of the allocated VF, runtimeConfig) and
# CNI_ARGS with every key twice (Multus's, then the runtime's); then what the container reads:
# Allocate's mount, bound read-only in a private mount namespace, and its rdmanet.env sourced as
# a training script would. DEL removes the files.
#
#   multus_chain.sh CNI DEVICE_PLUGIN FAKE_KUBELET SIMNODE
set -u
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (veths, netns, mounts)" && exit 77; }
cni=$(readlink -f "$1") dp=$(readlink -f "$2") kubelet_bin=$(readlink -f "$3") simnode=$(readlink -f "$4")
repo=$(cd "$(dirname "$0")/../.." && pwd)
DEMO_WORK=$(mktemp -d /tmp/rdmanet-multus-chain.XXXXXX)
root=$DEMO_WORK/node prefix=mc$$ ns=mc-pod-$$ fails=0
# shellcheck source=hack/demo/kubelet.sh
source "$repo/hack/demo/kubelet.sh"
ok() { echo "PASS: $*"; }
no() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
dp_pid=
cleanup() {
  kubelet_stop
  [[ -n $dp_pid ]] && kill "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  "$simnode" down --root "$root" >/dev/null 2>&1
  rm -rf "$DEMO_WORK"
}
trap cleanup EXIT
prefix=${prefix:0:6}
"$simnode" up --root "$root" --ifprefix "$prefix" --topology "$repo/hack/topologies/default.json" \
  >/dev/null || { echo "FAIL: simnode up" && exit 1; }

# 1. kubelet -> device plugin: Allocate.
cat >"$DEMO_WORK/pools.json" <<JSON
{"resourceList": [{"resourceName": "vf", "lossless": {"priority": 3, "dscp": 26},
  "podInfoDir": "$DEMO_WORK/pod-info",
  "selectors": {"vendors": ["15b3"], "devices": ["101e"], "isRdma": true}}]}
JSON
mkdir -p "$DEMO_WORK/kubelet/device-plugins"
kubelet_start "$kubelet_bin" "$DEMO_WORK/kubelet"
"$dp" --config "$DEMO_WORK/pools.json" --kubelet-dir "$DEMO_WORK/kubelet" --sysfs-root "$root" \
  --devinfo-dir "$DEMO_WORK/devinfo" --metrics-addr off >"$DEMO_WORK/dp.log" 2>&1 &
dp_pid=$!
KUBELET_TIMEOUT=60 kubelet wait rdma/vf 60000 || { tail "$DEMO_WORK/dp.log" && exit 1; }
id=$(kubelet_last devices rdma/vf | jq -r '[.devices[] | select(.health == "Healthy") | .id][0]')
kubelet allocate rdma/vf "$id" || { echo "FAIL: Allocate $id" && exit 1; }
resp=$(kubelet_last allocate rdma/vf | jq -c '.responses[0]')
mount_json=$(jq -c '.mounts[0]' <<<"$resp")
host_dir=$(jq -r .host_path <<<"$mount_json") ctr_dir=$(jq -r .container_path <<<"$mount_json")
[[ $host_dir == "$DEMO_WORK/pod-info/$id" && $ctr_dir == "/var/run/rdmanet/$id" &&
  $(jq .read_only <<<"$mount_json") == true ]] &&
  ok "Allocate($id) mounts $host_dir read-only at $ctr_dir" || no "Allocate's mount: $mount_json"
[[ $(jq -r '.envs.PCIDEVICE_RDMA_VF_POD_INFO' <<<"$resp") == "$ctr_dir" ]] &&
  ok "PCIDEVICE_RDMA_VF_POD_INFO=$ctr_dir" || no "no PCIDEVICE_RDMA_VF_POD_INFO: $(jq -c .envs <<<"$resp")"
rdma=$(jq -r '.envs.NCCL_IB_HCA | ltrimstr("=")' <<<"$resp")

# The kernel adds a RoCE v2 GID for the pod's address once it is configured; on the simulated
# node the test writes that entry (index 3), as the kernel's GID cache would.
gids=$root/sys/class/infiniband/$rdma/ports/1
printf '0000:0000:0000:0000:0000:ffff:0a4d:0005\n' >"$gids/gids/3"
printf 'RoCE v2\n' >"$gids/gid_attrs/types/3"

# 2. Multus -> rdmanet ADD, exactly as Multus v4.1.4 calls its delegate.
ip netns add "$ns"
# The chart declares only the CNIDeviceInfoFile capability; Multus writes the allocated VF into
# deviceID and pciBusID. The node's roots for the device-info file and pod info are this test's
# (cni/conf/node_config.h).
conf=$(jq -n --arg id "$id" --arg pi "$DEMO_WORK/pod-info" --arg di "$DEMO_WORK/devinfo/cni/x_net1" '{
  cniVersion: "1.0.0", name: "rdma-vf", type: "rdmanet", mode: "host-device",
  capabilities: {CNIDeviceInfoFile: true}, deviceID: $id, pciBusID: $id,
  mtu: 9000, lossless: {priority: 3, check: "warn"}, podInfoDir: $pi,
  ipam: {type: "static", addresses: [{address: "10.77.0.5/24"}]},
  runtimeConfig: {CNIDeviceInfoFile: $di}}')
mkdir -p "$DEMO_WORK/state"
jq -n --arg w "$DEMO_WORK" '{devinfoRoot: ($w + "/devinfo"), podInfoRoot: $w}' \
  >"$DEMO_WORK/state/node.conf"
args="K8S_POD_NAMESPACE=default;K8S_POD_NAME=train-0;K8S_POD_INFRA_CONTAINER_ID=mc;K8S_POD_UID=1f"
run_cni() {
  CNI_COMMAND=$1 CNI_CONTAINERID=mc CNI_NETNS=/var/run/netns/$ns CNI_IFNAME=net1 \
    CNI_PATH=/usr/lib/cni CNI_ARGS="IgnoreUnknown=true;$args;IgnoreUnknown=1;$args" \
    RDMANET_STATE_DIR=$DEMO_WORK/state RDMANET_SYSFS_ROOT=$root "$cni" <<<"$conf"
}
if out=$(run_cni ADD 2>"$DEMO_WORK/cni.log"); then
  ok "ADD with Multus's duplicated CNI_ARGS and pciBusID next to deviceID"
else
  no "ADD: $out $(tail -n 3 "$DEMO_WORK/cni.log")"
fi
jq -e --arg id "$id" '.pci."pci-address" == $id and (.pci."pf-pci-address" | length > 0)' \
  "$DEMO_WORK/devinfo/cni/x_net1" >/dev/null &&
  ok "device-info names the VF and its PF" || no "device-info: $(cat "$DEMO_WORK/devinfo/cni/x_net1")"

# 3. What the container reads: the mount as the runtime makes it (read-only bind), the env file
#    sourced the way a training script does.
read_env='mount -t tmpfs none /mnt && mkdir -p "/mnt/$2" && mount --bind -o ro "$1" "/mnt/$2" &&
  ! touch "/mnt/$2/x" 2>/dev/null && set -a && . "/mnt/$2/rdmanet.env" && set +a &&
  echo "$NCCL_IB_GID_INDEX $NCCL_IB_SL $RDMANET_IP $RDMANET_PCP $RDMANET_RDMA_DEVICE"'
got=$(unshare -m --propagation private bash -c "$read_env" _ "$host_dir" "$id" 2>&1)
# (NCCL_IB_TC comes from the port's DCB DSCP map, which the simulated node has not: the device
# plugin's env carries the pool's.)
[[ $got == "3 3 10.77.0.5 3 $rdma" ]] &&
  ok "the container reads NCCL_IB_GID_INDEX=3 NCCL_IB_SL=3 RDMANET_IP=10.77.0.5 RDMANET_PCP=3 RDMANET_RDMA_DEVICE=$rdma" ||
  no "the container read '$got'; rdmanet.env: $(cat "$host_dir/rdmanet.env" 2>&1)"
jq -e '."roce-v2-gid-index" == 3 and .ip == "10.77.0.5"' "$host_dir/rdmanet.json" >/dev/null &&
  ok "rdmanet.json agrees" || no "rdmanet.json: $(cat "$host_dir/rdmanet.json")"

# 4. DEL.
run_cni DEL >/dev/null 2>>"$DEMO_WORK/cni.log" || no "DEL failed"
[[ ! -e $host_dir/rdmanet.env && ! -e $host_dir/rdmanet.json ]] &&
  ok "DEL removed the pod info files" || no "DEL left $(ls "$host_dir")"
echo "multus_chain: $fails failed"
((fails == 0))
