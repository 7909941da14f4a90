#!/usr/bin/env bash
# Installs rdmanet into the cluster with its own chart, as a user would: hack/image.sh's image
# imported into the cluster's containerd (under the chart's default name), then `helm install`
# of manifests/helm/rdmanet with the per-mode values of manifests/values/ and only what this
# node differs in: its kubelet, CNI and CDI dirs, imagePullPolicy Never, the simulated node's
# pool and network, and host-local IPAM (whereabouts, which the example values use, is not
# installed here).
#
#   hack/cluster/rdmanet.sh deviceplugin|dra
#   hack/cluster/rdmanet.sh image               only the image, which VM nodes import at boot
#
# On the VM cluster (`cluster up --nodes N`) the pool is the nodes' real igb VFs and the network
# is mode sriov with a VLAN and a lossless priority; otherwise the simulated node's.
#
# RDMANET_VF_BANDWIDTH_MBPS: the vf pool's vfBandwidthMbps (each VF's share of its PF's link,
# which DRA publishes as counters the scheduler counts); unset: none.
# RDMANET_SHARED_CLAIM_MBPS (simulated node): adds the pool "shared" of its PFs, served to many
# claims at once (dra.allowMultipleAllocations) with their link speed as consumable capacity, of
# which a claim takes this much unless it asks otherwise (claimBandwidthMbps); unset: no such pool.
# RDMANET_RAIL_RULE: the chart's devicePlugin.lldp.rails, a YAML flow map ({match: ..., rail:
# ...}): how a port's rail is named from its LLDP neighbour; unset: the chart's default.
# RDMANET_IMAGE_ARCHIVE: an OCI archive from hack/image.sh to use instead of building one.
# Otherwise the three binaries are built ($BUILD_DIR, default build/) and the image is made once
# per set of binaries: <cache>/images/rdmanet-<hash of the binaries and hack/image.sh>.oci.tar.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
api=${1:?usage: rdmanet.sh deviceplugin|dra|image}

"$repo/hack/install-helm.sh"
helm=$("$repo/hack/install-helm.sh" --print)/bin/helm
chart=$repo/manifests/helm/rdmanet
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$chart/Chart.yaml")

archive=${RDMANET_IMAGE_ARCHIVE:-}
image_name=docker.io/library/rdmanet:$version
# VM nodes imported the image `rdmanet.sh image` listed before they booted: the install uses
# that one, whatever the build dir holds by now.
if [[ -z $archive && $api != image ]] && (($(vm_nodes))); then
  archive=$(awk -v n="$image_name" '$1 == n {a = $2} END {print a}' "$state_dir/images")
  [[ -n $archive ]] || die "no rdmanet image in $state_dir/images (rdmanet.sh image first)"
fi
if [[ -z $archive ]]; then
  build_dir=${BUILD_DIR:-$repo/build}
  [[ $build_dir = /* ]] || build_dir=$repo/$build_dir
  if [[ ! -f $build_dir/build.ninja ]]; then
    cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  cmake --build "$build_dir" -j"$(nproc)" --target rdmanet rdmanet-device-plugin rdmanet-doctor \
    >/dev/null
  key=$(cat "$build_dir/cni/rdmanet" "$build_dir/deviceplugin/rdmanet-device-plugin" \
    "$build_dir/deviceplugin/doctor/rdmanet-doctor" "$repo/hack/image.sh" | sha256sum | cut -c1-16)
  archive=$cache_dir/images/rdmanet-$version-$key.oci.tar
  if [[ ! -f $archive ]]; then
    rm -f "$cache_dir/images/rdmanet-$version"-*.oci.tar
    BUILD_DIR=$build_dir "$repo/hack/image.sh" --out "$archive" >"$logs/image.log" 2>&1 ||
      die "hack/image.sh failed (log: $logs/image.log)"
  fi
fi
# hack/image.sh names the image rdmanet:<version> (ref.name); kubelet asks the CRI for the
# normalized docker.io/library/rdmanet:<version>, the chart's default image.
import_image "$image_name" "$archive"
[[ $api == image ]] && exit 0

case $api in
  deviceplugin) values=$repo/manifests/values/sriov.yaml ;;
  dra) values=$repo/manifests/values/sriov-dra.yaml ;;
esac
# What every node's values share: kubelet's --root-dir holds pod-resources/ and the DRA dirs;
# device-plugins/ is at its fixed path.
node_values() {
  cat <<YAML
api: $api
image: {pullPolicy: Never}
cni: {binDir: "$cni_bin"}
devicePlugin:
  kubeletDir: "$kubelet_dir"
  devicePluginDir: "$device_plugin_dir"
  cdi: {dir: "$cdi_dir"}
YAML
  if [[ -n ${RDMANET_RAIL_RULE:-} ]]; then
    echo "  lldp: {rails: $RDMANET_RAIL_RULE}"
  fi
}
# Every node's one pool, "vf" (the networks below name it): the VFs SELECTOR picks, lossless on
# priority 3 (DSCP 26). The caller may add keys to its entry on the lines that follow.
vf_pool() {
  cat <<YAML
pools:
  - resourceName: vf
    mode: vf
    selectors:
      - $1
    lossless: {priority: 3, dscp: 26}
YAML
  if [[ -n ${RDMANET_VF_BANDWIDTH_MBPS:-} ]]; then
    [[ $RDMANET_VF_BANDWIDTH_MBPS =~ ^[1-9][0-9]{0,7}$ ]] ||
      die "RDMANET_VF_BANDWIDTH_MBPS=$RDMANET_VF_BANDWIDTH_MBPS is not a number of Mbit/s"
    echo "    vfBandwidthMbps: $RDMANET_VF_BANDWIDTH_MBPS"
  fi
}
# The simulated node's PFs as one shared pool, when RDMANET_SHARED_CLAIM_MBPS asks for it.
shared_pool() {
  [[ -n ${RDMANET_SHARED_CLAIM_MBPS:-} ]] || return 0
  [[ $RDMANET_SHARED_CLAIM_MBPS =~ ^[1-9][0-9]{0,7}$ ]] ||
    die "RDMANET_SHARED_CLAIM_MBPS=$RDMANET_SHARED_CLAIM_MBPS is not a number of Mbit/s"
  cat <<YAML
  - resourceName: shared
    mode: shared
    claimBandwidthMbps: $RDMANET_SHARED_CLAIM_MBPS
    selectors:
      - {vendors: ["15b3"], devices: ["101d"], drivers: [mlx5_core], isRdma: true}
dra: {allowMultipleAllocations: true}
YAML
}
if (($(vm_nodes))); then
  cat >"$state_dir/rdmanet-values.yaml" <<YAML
$(node_values)
  # igb counts no traffic per VF (the kernel reports zeros): the pods' own eth1 counters, read in
  # their namespaces, are the only interface bytes the silent-TCP-fallback signal has here. The
  # cluster's containerd keeps them under its own state dir (containerd.sh), not /var/run/netns.
  podNetns: {enabled: true, dir: "$run_dir/containerd/io.containerd.grpc.v1.cri/netns"}
# The VM nodes' igb (82576) VFs. They have no RDMA device of their own: Soft-RoCE goes on top
# of a pod's VF (hack/vm/roce_pods.sh's arrangement).
$(vf_pool '{vendors: ["8086"], devices: ["10ca"], drivers: [igbvf]}')
# One network per node, on 20 addresses of 192.168.100.0/24 of its own: host-local keeps its
# leases per node, so two nodes sharing one range would hand out the same address (whereabouts
# is not installed here).
# igb has no DCB: the lossless priority is set on the VF and its PFC check only warns. Nor can
# igb set a VF's link_state (rdmanet refuses the setting with a clear error), so none is asked.
networks:
$(for ((i = 1; i <= $(vm_nodes); i++)); do
    cat <<NET
  - name: rdma-vf-$i
    mode: sriov
    pool: vf
    mtu: 1500
    vlan: 100
    spoofchk: "on"
    trust: "off"
    lossless: {priority: 3, check: warn}
    ipam: {type: host-local, subnet: 192.168.100.0/24, rangeStart: 192.168.100.$((i * 20)), rangeEnd: 192.168.100.$((i * 20 + 19))}
NET
  done)
YAML
  "$helm" --kubeconfig "$kubeconfig" upgrade --install rdmanet "$chart" --namespace rdmanet \
    --create-namespace -f "$values" -f "$state_dir/rdmanet-values.yaml" --wait --timeout 10m \
    >/dev/null
  kc -n rdmanet rollout status ds/rdmanet --timeout 600s >/dev/null
  exit 0
fi
cat >"$state_dir/rdmanet-values.yaml" <<YAML
$(node_values)
# The simulated node's NICs (hack/topologies/default.json, netdevs prefixed "rc"): its
# ConnectX-class VFs, whichever PF.
$(vf_pool '{vendors: ["15b3"], devices: ["101e"], drivers: [mlx5_core], isRdma: true}')
    preferredAllocation: gpu-near
$(shared_pool)
# host-device: the simulated VFs are veths, which report no VFs over netlink (sriov mode needs
# the VM's igb), and this kernel has no VLAN devices, so no vlan and no lossless priority.
networks:
  - name: rdma-vf
    mode: host-device
    pool: vf
    mtu: 9000
    ipam: {type: host-local, subnet: 192.168.100.0/24}
YAML
RDMANET_CLUSTER_SYSFS=$run_dir/simnode/sys "$helm" --kubeconfig "$kubeconfig" \
  upgrade --install rdmanet "$chart" --namespace rdmanet --create-namespace \
  --post-renderer "$cluster_dir/postrender-sysfs.sh" \
  -f "$values" -f "$state_dir/rdmanet-values.yaml" --wait --timeout 3m >/dev/null
# helm's --wait counts a DaemonSet ready with maxUnavailable (1) pods missing: wait for the pod.
kc -n rdmanet rollout status ds/rdmanet --timeout 120s >/dev/null
