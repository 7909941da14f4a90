#!/usr/bin/env bash
# Installs Multus, the thick plugin, the way its upstream deployment does: its daemon in a
# kube-system DaemonSet pod (image built here from the cached binaries; `multus.sh image` only
# builds it), its CRD and RBAC applied from upstream's own manifest, and the multus-shim CNI binary in the node's CNI bin dir. The
# daemon writes 00-multus.conf from the cluster network's config (network.sh), so every pod's
# CNI calls go through Multus, which delegates eth0 to the bridge and extra networks (NADs) to
# their plugins, reading device IDs from kubelet's pod-resources API.
#
# Differences from upstream's DaemonSet, and why:
# - The API server is reached at the node's address: nothing routes the kubernetes Service's
#   ClusterIP here (no kube-proxy), so KUBERNETES_SERVICE_HOST/PORT are set explicitly.
# - RDMANET_SYSFS_ROOT, which the daemon's environment hands to rdmanet's CNI, names the
#   simulated node (this machine has no RDMA NICs).
# - Paths are the cluster's own (CNI dirs, kubelet dir, netns under containerd's state), mounted
#   at the same paths inside the pod, since the daemon hands host paths to the shim and to the
#   delegates it runs chrooted into the host's root.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=hack/lib/oci.sh
. "$repo/hack/lib/oci.sh"

read -r ver _ < <(versions_line multus)
bin=$(bin_dir multus)
image=rdmanet.local/multus:$ver

tar=$cache_dir/images/multus-$ver-$(sha256sum "$bin/multus-daemon" "$repo/hack/lib/oci.sh" "$0" |
  sha256sum | cut -c1-16).oci.tar
if [[ ! -f $tar ]]; then
  root=$(mktemp -d)
  mkdir -p "$root/usr/src/multus-cni/bin" "$root/etc"
  install -m 0755 "$bin/multus-daemon" "$root/usr/src/multus-cni/bin/"
  # The daemon checks that it runs as root by name (os/user reads /etc/passwd without cgo).
  echo 'root:x:0:0:root:/:/nonexistent' >"$root/etc/passwd"
  # Multus reads device plugins' device-info under /var/run/k8s.cni.cncf.io (the /run mount):
  # without the link every pod's network-status lacked its device-info.
  mkdir -p "$root/var" "$root/run"
  ln -s ../run "$root/var/run"
  oci_archive "$root" "$tar" --name "$image" --env "$workload_path" \
    -- /usr/src/multus-cni/bin/multus-daemon >/dev/null
  rm -rf "$root"
fi
import_image "$image" "$tar"
# `multus.sh image`: only the image, which VM nodes import at their boot (up.sh, before them).
[[ ${1:-} == image ]] && exit 0

install -m 0755 "$bin/multus-shim" "$cni_bin/multus-shim"

# Upstream's CRD, ClusterRole, ClusterRoleBinding and ServiceAccount: every document of its
# thick manifest but the ConfigMap and DaemonSet, which follow.
awk 'BEGIN{RS="\n---\n"} !/\nkind: (ConfigMap|DaemonSet)\n/ {print $0; print "---"}' \
  "$bin/../multus-daemonset-thick.yml" | kc apply -f - >/dev/null

mkdir -p "$run_dir/multus" "$state_dir/multus"
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: multus-daemon-config, namespace: kube-system}
data:
  daemon-config.json: |
    {
      "chrootDir": "/hostroot",
      "cniVersion": "1.0.0",
      "logLevel": "verbose",
      "logToStderr": true,
      "cniConfigDir": "$cni_conf",
      "multusAutoconfigDir": "$cni_conf",
      "multusConfigFile": "auto",
      "binDir": "$cni_bin",
      "socketDir": "$run_dir/multus",
      "daemonSocketDir": "$run_dir/multus"
    }
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kube-multus-ds, namespace: kube-system, labels: {app: multus}}
spec:
  selector: {matchLabels: {name: multus}}
  template:
    metadata: {labels: {name: multus, app: multus}}
    spec:
      hostNetwork: true
      hostPID: true
      priorityClassName: system-node-critical
      tolerations: [{operator: Exists}]
      serviceAccountName: multus
      terminationGracePeriodSeconds: 10
      containers:
      - name: kube-multus
        image: $image
        imagePullPolicy: Never
        securityContext: {privileged: true}
        env:
        - {name: MULTUS_NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: KUBERNETES_SERVICE_HOST, value: "$apiserver_ip"}
        - {name: KUBERNETES_SERVICE_PORT, value: "$apiserver_port"}
$(if (($(vm_nodes) == 0)); then
    echo "        # Passed on to the delegates it runs: rdmanet's CNI reads the simulated node's sysfs."
    echo "        - {name: RDMANET_SYSFS_ROOT, value: \"$run_dir/simnode\"}"
  fi)
        volumeMounts:
        - {name: config, mountPath: /etc/cni/net.d/multus.d, readOnly: true}
        - {name: hostroot, mountPath: /hostroot}
        - {name: run, mountPath: /hostroot$run_dir, mountPropagation: HostToContainer}
        - {name: run, mountPath: $run_dir, mountPropagation: HostToContainer}
        - {name: cni-conf, mountPath: $cni_conf}
        - {name: cni-bin, mountPath: $cni_bin}
        - {name: multus-state, mountPath: /var/lib/cni/multus}
        - {name: pod-resources, mountPath: /var/lib/kubelet/pod-resources}
        - {name: devinfo, mountPath: /run/k8s.cni.cncf.io}
      volumes:
      - {name: config, configMap: {name: multus-daemon-config}}
      - {name: hostroot, hostPath: {path: /}}
      - {name: run, hostPath: {path: $run_dir}}
      - {name: cni-conf, hostPath: {path: $cni_conf}}
      - {name: cni-bin, hostPath: {path: $cni_bin}}
      - {name: multus-state, hostPath: {path: $state_dir/multus}}
      - {name: pod-resources, hostPath: {path: $kubelet_dir/pod-resources}}
      - {name: devinfo, hostPath: {path: /run/k8s.cni.cncf.io, type: DirectoryOrCreate}}
YAML
if (($(vm_nodes) == 0)); then
  wait_for 120 "Multus (00-multus.conf)" test -f "$cni_conf/00-multus.conf"
else
  # The VM nodes' own files are out of sight: every node's Multus pod Ready.
  kc -n kube-system rollout status ds/kube-multus-ds --timeout 600s >/dev/null
fi
