# shellcheck shell=bash
# Checks and disruptions both API modes' cluster tests make. Sourced, not run.
# shellcheck source=tests/cluster/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# --- 2. The chart, installed for real: helm install went through the real API server (up does
# it, with the chart's own values files), the DaemonSet's pod runs unprivileged as the chart
# says, and the CNI binary reached the node's CNI dir through the chart's init container.
check_chart_installed() {
  local pod sc
  pod=$(kc -n rdmanet get pods -o 'jsonpath={.items[0].metadata.name}')
  [[ -n $pod ]] || fail "no rdmanet pod"
  sc=$(kc -n rdmanet get pod "$pod" -o \
    'jsonpath={.spec.containers[0].securityContext.privileged}/{.spec.containers[0].securityContext.capabilities.drop[0]}/{.spec.containers[0].securityContext.allowPrivilegeEscalation}')
  eq "daemon container securityContext (privileged/drop/escalation)" "false/ALL/false" "$sc"
  [[ $(kc -n rdmanet get pod "$pod" -o 'jsonpath={.status.phase}') == Running ]] ||
    fail "the daemon's pod $pod is not Running"
  [[ -x $cni_bin/rdmanet ]] || fail "$cni_bin/rdmanet was not installed"
  # The chart's init container copied the image's binary: it answers VERSION like the build's.
  local want got
  want=$(CNI_COMMAND=VERSION "${BUILD_DIR:-$repo/build}/cni/rdmanet" </dev/null)
  got=$(CNI_COMMAND=VERSION "$cni_bin/rdmanet" </dev/null)
  eq "installed CNI binary's VERSION" "$want" "$got"
  ok "chart installed: daemon pod $pod Running unprivileged, CNI binary in $cni_bin"
}

# check_pod_kept_eth1 POD: the pod's eth1 is still there and up. Right after a restart kubelet's
# exec streams may not answer yet: asked again for a while, and a real loss stays lost.
eth1_up() {
  local state
  state=$(pod_exec "$1" cat /sys/class/net/eth1/operstate) || return 1
  [[ $state == up || $state == unknown ]]
}
check_pod_kept_eth1() {
  local i
  for ((i = 0; i < 60; i++)); do
    eth1_up "$1" 2>/dev/null && return 0
    sleep 0.5
  done
  pod_exec "$1" ip link show dev eth1 >&2 || true
  fail "$1 lost eth1"
}

# check_rdma_container POD ENV_PREFIX: what the container got for its VF: the PCIDEVICE_* and
# NCCL_* variables and the /dev/infiniband nodes of the VF's RDMA device. Prints the VF's PCI
# address.
check_rdma_container() {
  local pod=$1 prefix=$2 pci hca nodes
  pci=$(pod_env "$pod" "$prefix") || fail "$pod has no $prefix"
  [[ $pci =~ ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]] || fail "$prefix=$pci in $pod"
  hca=$(pod_env "$pod" NCCL_IB_HCA) || fail "$pod has no NCCL_IB_HCA"
  [[ $hca == =* ]] || fail "NCCL_IB_HCA=$hca in $pod (want an exact =<dev> list)"
  nodes=$(pod_exec "$pod" ls /dev/infiniband) || fail "$pod has no /dev/infiniband"
  grep -qx rdma_cm <<<"$nodes" || fail "$pod lacks /dev/infiniband/rdma_cm (has: $nodes)"
  grep -q '^uverbs[0-9]' <<<"$nodes" || fail "$pod lacks a uverbs node (has: $nodes)"
  echo "$pci"
}

# check_eth1 POD PCI [DEVICE_INFO]: eth1 is the VF's netdev (the simulated VF's MAC), with the
# network's MTU and an address of its subnet, and the pod's network-status entry for eth1 has
# that MAC. DEVICE_INFO (default yes): the entry also carries the VF's device-info, which Multus
# adds only for a network whose deviceID it resolved itself (not for a DRA claim before v4.3.1).
check_eth1() {
  local pod=$1 pci=$2 info=${3:-yes} link addr status mac want_mac
  link=$(pod_exec "$pod" cat /sys/class/net/eth1/address /sys/class/net/eth1/mtu) ||
    fail "$pod has no eth1"
  mac=${link%%$'\n'*}
  want_mac=$(cat "$simnode_sys/bus/pci/devices/$pci"/net/*/address)
  eq "eth1's MAC in $pod (the MAC of VF $pci)" "$want_mac" "$mac"
  eq "eth1 MTU in $pod" 9000 "${link##*$'\n'}"
  addr=$(pod_exec "$pod" ip -4 -o addr show dev eth1)
  [[ $addr == *" 192.168.100."* ]] || fail "$pod's eth1 has no 192.168.100.0/24 address: $addr"
  status=$(kc -n "$ns" get pod "$pod" -o \
    'jsonpath={.metadata.annotations.k8s\.v1\.cni\.cncf\.io/network-status}')
  /usr/bin/python3 - "$status" "$pci" "$mac" "$info" <<'PY' || fail "$pod's network-status: $status"
import json, sys
status, pci, mac, info = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
e = [n for n in status if n.get("interface") == "eth1"]
assert len(e) == 1, "no eth1 entry"
e = e[0]
assert e.get("mac", "").lower() == mac.lower(), f"mac {e.get('mac')} != {mac}"
if info == "yes":
    d = e.get("device-info", {})
    assert d.get("type") == "pci" and d.get("pci", {}).get("pci-address") == pci, d
PY
}

# check_dp_pod POD: a device-plugin pod's VF on its CPUs' NUMA node (node 0: kubelet sees one),
# and eth1, env and device nodes.
check_dp_pod() {
  local pci
  pci=$(check_rdma_container "$1" PCIDEVICE_RDMA_VF)
  eq "NUMA node of $1's VF $pci" 0 "$(pci_numa "$pci")"
  check_eth1 "$1" "$pci"
  ok "$1: VF $pci on NUMA node 0, eth1 with its MAC, MTU 9000 and an address, env, /dev/infiniband"
}

# check_pf_link_health COUNT_IS ALL: a PF's link down takes its VFs out of service (COUNT_IS
# ALL-<its VFs> succeeds), link up brings them back (COUNT_IS ALL).
check_pf_link_health() {
  local count_is=$1 all=$2 pf pfdev nvf
  pf=$(for v in $(pool_vfs); do basename "$(readlink -f "$simnode_sys/bus/pci/devices/$v/physfn")"; done |
    sort | head -n1)
  pfdev=$(host_netdev_of "$pf")
  [[ -n $pfdev ]] || fail "PF $pf has no netdev"
  nvf=$(find "$simnode_sys/bus/pci/devices/$pf/" -maxdepth 1 -name 'virtfn*' | wc -l)
  ip link set "$pfdev" down
  wait_until 30 "$((all - nvf)) healthy after $pfdev down" "$count_is" $((all - nvf))
  ip link set "$pfdev" up
  wait_until 30 "$all healthy after $pfdev up" "$count_is" "$all"
  ok "PF $pf ($pfdev) down: $nvf VFs out ($((all - nvf)) left); up: $all again"
}

# The daemon's per-pod map (its /metrics, issue 24) under the real kubelet: POD holds PCI, and
# the map was cross-checked with kubelet's pod-resources API (the chart's kubeletDir mount).
pod_in_map() { # POD PCI
  metrics | grep -Eq "^rdmanet_pod_device_info\{namespace=\"$ns\",pod=\"$1\",[^}]*device=\"$2\"[^}]*\} 1\$"
}
pod_gone_from_map() { # POD
  local m
  m=$(metrics) || return 1
  ! grep -q "pod=\"$1\"" <<<"$m"
}
check_pod_in_map() { # POD PCI
  wait_until 30 "$1 holding $2 in the daemon's pod map" pod_in_map "$1" "$2"
  eq "rdmanet_pod_map_kubelet_answered" 1 "$(metric rdmanet_pod_map_kubelet_answered)"
  ok "$1 holds $2 in the daemon's per-pod map, cross-checked with kubelet's pod-resources"
}

# Disruptions (issue 22, section 5).
restart_kubelet() {
  stop_daemon kubelet 30
  "$repo/hack/cluster/kubelet.sh"
}
restart_containerd() {
  stop_daemon containerd 30
  "$repo/hack/cluster/containerd.sh"
}
delete_daemon_pod() {
  kc -n rdmanet delete pod -l app.kubernetes.io/component=node --wait --timeout 60s >/dev/null
  kc -n rdmanet rollout status ds/rdmanet --timeout 120s >/dev/null
}

# check_pod_cannot_take_anothers_vf OWNER: a pod in another namespace, with no rdmanet resource,
# names OWNER's VF in its network annotation (Multus passes an annotation's deviceID to the CNI
# when the pod requested no resource). Its sandbox is refused with rdmanet's error and it gets
# no device; OWNER keeps its VF as eth1 (issue 29). The chart declares no deviceID capability, so
# the CNI sees no device at all ("needs ... deviceID"); with the capability it would see the VF
# and refuse it as not the pod's (tests/cni/tenant_netns_test.cc covers that path).
check_pod_cannot_take_anothers_vf() {
  local owner=$1 thief=rdma-thief tns=rdmanet-thief vf annotation msg
  vf=$(pod_env "$owner" PCIDEVICE_RDMA_VF)
  kc create namespace "$tns" >/dev/null
  wait_until 60 "default ServiceAccount in $tns" kc -n "$tns" get serviceaccount default
  annotation="k8s.v1.cni.cncf.io/networks: '[{\"name\": \"rdma-vf\", \"namespace\": \"rdmanet\", \"interface\": \"eth1\", \"deviceID\": \"$vf\"}]'"
  ns=$tns workload_pod "$thief" "cpu: 100m" "$annotation" | kc apply -f - >/dev/null
  sandbox_refused() {
    kc -n "$tns" get events --field-selector "involvedObject.name=$thief" \
      -o 'jsonpath={.items[*].message}' | grep -q deviceID
  }
  wait_until 120 "$thief's sandbox refused by rdmanet" sandbox_refused
  msg=$(kc -n "$tns" get events --field-selector "involvedObject.name=$thief" \
    -o 'jsonpath={.items[*].message}')
  echo "$thief's sandbox: $(grep -o '.\{0,300\}deviceID.\{0,200\}' <<<"$msg" | head -n 1)"
  [[ $(kc -n "$tns" get pod "$thief" -o 'jsonpath={.status.phase}') != Running ]] ||
    fail "$thief runs with $owner's VF $vf"
  [[ -z $(host_netdev_of "$vf") ]] || fail "$vf left $owner's pod"
  check_pod_kept_eth1 "$owner"
  kc delete namespace "$tns" --wait --timeout 120s >/dev/null
  ok "a pod naming $owner's VF $vf in its annotation got rdmanet's error and no device; $owner kept it"
}
