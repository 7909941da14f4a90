#!/usr/bin/env bash
# rdmanet in DRA mode under a real one-node cluster (hack/cluster): the chart's DeviceClass and
# the daemon's ResourceSlices accepted by the real API server, claims allocated by the real
# scheduler (a GPU and a NIC under one PCIe root, with a second, fake GPU driver), prepared by
# the real kubelet and applied by containerd through CDI, a PF's health as device taints, the
# pool's extended resource, and restarts (issue 22, sections 2, 4 and 5).
# shellcheck source=tests/cluster/checks.sh
. "$(dirname "$0")/checks.sh"

driver=rdma.rdmanet.io
nic_class=vf.rdma.rdmanet.io
gpu_driver=gpu.test.rdmanet.io
[[ -x ${FAKE_GPU_DRIVER:-} ]] || fail "FAKE_GPU_DRIVER (tests/cluster/fake_gpu_driver) is not built"

cluster_up dra
check_chart_installed
kc get deviceclass "$nic_class" >/dev/null || fail "the chart's DeviceClass $nic_class is missing"

mapfile -t vfs < <(pool_vfs)
# slice_devices: "<device> <pciBusID> <pcieRoot> <taint keys>" per device of rdmanet's slices
# for this node.
slice_devices() {
  kc get resourceslices -o json | /usr/bin/python3 -c '
import json, sys
driver, node = sys.argv[1], sys.argv[2]
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] != driver or s["spec"].get("nodeName") != node:
        continue
    for d in s["spec"].get("devices", []):
        a = d.get("attributes", {})
        taints = ",".join(t["key"] for t in d.get("taints", [])) or "-"
        print(d["name"], a["resource.kubernetes.io/pciBusID"]["string"],
              a["resource.kubernetes.io/pcieRoot"]["string"], taints)
' "$driver" "$node_name"
}
slice_count_is() { [[ $(slice_devices | wc -l) == "$1" ]]; }
# slice_uids: the UIDs of rdmanet's slices for this node, sorted, one a line.
slice_uids() {
  kc get resourceslices -o json | /usr/bin/python3 -c '
import json, sys
driver, node = sys.argv[1], sys.argv[2]
print("\n".join(sorted(s["metadata"]["uid"] for s in json.load(sys.stdin)["items"]
                       if s["spec"]["driver"] == driver and s["spec"].get("nodeName") == node)))
' "$driver" "$node_name"
}
wait_until 60 "${#vfs[@]} devices in rdmanet's ResourceSlices" slice_count_is "${#vfs[@]}"
# Every device's pcieRoot is its function's root in the simulated node's topology.
while read -r dev pci root _; do
  eq "pcieRoot of $dev" "$(pci_root "$pci")" "$root"
done < <(slice_devices)
ok "ResourceSlices publish the ${#vfs[@]} VFs, each with its PCIe root"

# --- The chart's ValidatingAdmissionPolicy: with a token of the daemon's own (its service
# account, bound to its pod and so to this node), the API server refuses a ResourceSlice of
# another node or another driver, and still takes one of this node and driver. RBAC alone
# would let that token write every node's slices.
daemon_pod=$(kc -n rdmanet get pods -l app.kubernetes.io/component=node \
  -o 'jsonpath={.items[0].metadata.name}')
daemon_sa=$(kc -n rdmanet get pod "$daemon_pod" -o 'jsonpath={.spec.serviceAccountName}')
daemon_token=$(kc -n rdmanet create token "$daemon_sa" --bound-object-kind Pod \
  --bound-object-name "$daemon_pod" --duration 10m)
# The daemon's credentials alone: no kubeconfig, so no admin client certificate beside them.
as_daemon() {
  "$(k8s_bin)/kubectl" --kubeconfig /dev/null --server "https://$apiserver_ip:$apiserver_port" \
    --certificate-authority "$pki/ca.crt" --token "$daemon_token" "$@"
}
slice_yaml() { # NAME NODE DRIVER
  cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $1}
spec:
  driver: $3
  nodeName: $2
  pool: {name: $2, generation: 1, resourceSliceCount: 1}
  devices: [{name: probe}]
EOF
}
refused() { # WHY NAME NODE DRIVER: the daemon's create is refused, naming WHY
  local out
  if out=$(slice_yaml "$2" "$3" "$4" | as_daemon create -f - 2>&1); then
    kc delete resourceslice "$2" --ignore-not-found >/dev/null
    fail "the daemon's token created a ResourceSlice for node $3, driver $4"
  fi
  [[ $out == *"$1"* ]] || fail "slice for node $3, driver $4: refused, but not by the policy: $out"
}
refused "may write only the ResourceSlices of its own node" vap-other-node other-node "$driver"
refused "of its driver" vap-other-driver "$node_name" gpu.example.com
# A slice of another node that exists already: the daemon cannot delete or update it either.
slice_yaml vap-foreign other-node "$driver" | kc create -f - >/dev/null
out=$(as_daemon delete resourceslice vap-foreign 2>&1) &&
  fail "the daemon's token deleted another node's ResourceSlice"
[[ $out == *"may write only the ResourceSlices of its own node"* ]] || fail "delete: $out"
# An update as the daemon makes one: a PUT of the whole object at its resourceVersion (its RBAC
# has no get, which `kubectl label` would need first).
rv=$(kc get resourceslice vap-foreign -o jsonpath='{.metadata.resourceVersion}')
out=$(slice_yaml vap-foreign other-node "$driver" |
  sed "s/^metadata: {name: vap-foreign}\$/metadata: {name: vap-foreign, resourceVersion: \"$rv\", labels: {probe: \"1\"}}/" |
  as_daemon replace -f - 2>&1) &&
  fail "the daemon's token updated another node's ResourceSlice"
[[ $out == *"may write only the ResourceSlices of its own node"* ]] || fail "update: $out"
kc delete resourceslice vap-foreign >/dev/null
# Its own node's, of its driver: allowed (what refused it above was the policy, not RBAC).
slice_yaml vap-own "$node_name" "$driver" | as_daemon create -f - >/dev/null ||
  fail "the daemon's token cannot create a ResourceSlice of its own node"
as_daemon delete resourceslice vap-own --ignore-not-found >/dev/null ||
  fail "the daemon's token cannot delete a ResourceSlice of its own node"
ok "the daemon's own token writes only its node's ResourceSlices of its driver"


# --- The second driver: fake GPUs on the simulated node's GPU functions.
gpus=()
for d in "$simnode_sys"/bus/pci/devices/*; do
  [[ $(cat "$d/class") == 0x0302* ]] && gpus+=("$(basename "$d")")
done
((${#gpus[@]} > 0)) || fail "the simulated node has no GPUs"
"$FAKE_GPU_DRIVER" --driver "$gpu_driver" --kubelet-dir "$kubelet_dir" >fake-gpu-driver.log 2>&1 &
gpu_pid=$!
stop_gpu_driver() {
  kill "$gpu_pid" 2>/dev/null || true
  wait "$gpu_pid" 2>/dev/null || true
}
teardown_hooks+=(stop_gpu_driver)
{
  cat <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $gpu_driver}
spec:
  selectors: [{cel: {expression: 'device.driver == "$gpu_driver"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $node_name-fake-gpus}
spec:
  driver: $gpu_driver
  nodeName: $node_name
  pool: {name: $node_name, generation: 1, resourceSliceCount: 1}
  devices:
YAML
  i=0
  for g in "${gpus[@]}"; do
    cat <<YAML
    - name: gpu-$i
      attributes:
        resource.kubernetes.io/pcieRoot: {string: "$(pci_root "$g")"}
        resource.kubernetes.io/pciBusID: {string: "$g"}
YAML
    i=$((i + 1))
  done
} | kc apply -f - >/dev/null
gpu_registered() { grep -q "registered with kubelet" fake-gpu-driver.log; }
wait_until 30 "the fake GPU driver registered with kubelet" gpu_registered

# claim_pod NAME REQUESTS [CONSTRAINTS]: creates a pod with a ResourceClaimTemplate of its own.
claim_pod() { claim_pod_yaml "$@" | kc apply -f - >/dev/null; }
delete_claim_pod() {
  delete_pod "$1"
  kc -n "$ns" delete resourceclaimtemplate "$1" --wait >/dev/null
}
# allocated POD DRIVER: the devices of POD's claim from DRIVER, one a line.
allocated() {
  local claim
  claim=$(kc -n "$ns" get pod "$1" -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}')
  kc -n "$ns" get resourceclaim "$claim" -o json | /usr/bin/python3 -c '
import json, sys
for r in json.load(sys.stdin)["status"]["allocation"]["devices"]["results"]:
    if r["driver"] == sys.argv[1]:
        print(r["device"])
' "$2"
}
nic_request="[{name: nic, exactly: {deviceClassName: $nic_class}}]"
# Device metadata (KEP-5304, issue 32 section 5): where a container reads its request's file, as
# upstream's readers build the path (k8s.io/dynamic-resource-allocation/api/metadata): under
# resourceclaimtemplates/<pod claim name>/ for a template's claim ("devs" in workload_pod), under
# resourceclaims/<claim>/ for a claim the pod names.
meta_dir=/var/run/kubernetes.io/dra-device-attributes
# metadata_of POD FILE: "<apiVersion,...> <claim name> <request> <pciBusID,...>" of the metadata
# file FILE as POD's container reads it: a stream of JSON objects, read as upstream's decoder
# reads it (one object after the other), the names from the first.
metadata_of() {
  pod_exec "$1" cat "$2" | /usr/bin/python3 -c '
import json, sys
text, objs, i, dec = sys.stdin.read(), [], 0, json.JSONDecoder()
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i == len(text):
        break
    o, i = dec.raw_decode(text, i)
    objs.append(o)
req = objs[0]["requests"][0]
print(",".join(o["apiVersion"] for o in objs), objs[0]["metadata"]["name"], req["name"],
      ",".join(d["attributes"]["resource.kubernetes.io/pciBusID"]["string"] for d in req["devices"]))
'
}
meta_versions=metadata.resource.k8s.io/v1beta1,metadata.resource.k8s.io/v1alpha1

# --- Issue 32, section 4: rails from LLDP. Two real LLDP senders (Debian's lldpd) on the switch
# side of the simulated node's veths: "leaf-a" on the ports ending in f0, "leaf-b" on those
# ending in f1. The daemon (with the chart's default rule: a rail is its switch's system name)
# publishes each device's neighbour and rail, writes the node's rails on its labels and
# annotation, and a claim that selects rail leaf-b gets a VF of an f1 port. The chart's policy
# lets the daemon's token change only those keys, of its own Node.
sim_ns=rdmanet-sim-rc
# peer_of NETDEV: its veth's other end, in the simulated node's switch namespace.
peer_of() {
  local iflink
  iflink=$(cat "/sys/class/net/$1/iflink")
  ip -n "$sim_ns" -o link show | awk -F': ' -v i="$iflink" '$1 == i {sub(/@.*/, "", $2); print $2}'
}
declare -A leaf_peers=()
for v in "${vfs[@]}"; do
  port=$(ls "$simnode_sys/bus/pci/devices/$v/physfn/net")
  leaf="leaf-b"
  [[ $port == *f0 ]] && leaf="leaf-a"
  peer=$(peer_of "$port")
  [[ -n $peer ]] || fail "no switch-side veth for $port in $sim_ns"
  [[ ,${leaf_peers[$leaf]:-}, == *",$peer,"* ]] || leaf_peers[$leaf]+=${leaf_peers[$leaf]:+,}$peer
done
for leaf in leaf-a leaf-b; do start_leaf "$leaf" "${leaf_peers[$leaf]}" "$sim_ns"; done
# slice_rails: "<device> <pfName> <rail> <switchPortId>" per device of rdmanet's slices ("-" for
# an absent attribute).
slice_rails() {
  kc get resourceslices -o json | /usr/bin/python3 -c '
import json, sys
driver, node = sys.argv[1], sys.argv[2]
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] != driver or s["spec"].get("nodeName") != node:
        continue
    for d in s["spec"].get("devices", []):
        a = d.get("attributes", {})
        val = lambda k: a.get("rdmanet.io/" + k, {}).get("string", "-")
        print(d["name"], val("pfName"), val("rail"), val("switchPortId"))
' "$driver" "$node_name"
}
# Every device on its port's leaf (f0: leaf-a, f1: leaf-b), or none on any.
rails_are() { # on|off
  slice_rails | awk -v on="$1" '{ want = on == "off" ? "-" : ($2 ~ /f0$/ ? "leaf-a" : "leaf-b")
    if ($3 != want) bad++ } END { exit bad > 0 }'
}
node_label() { kc get node "$node_name" -o "jsonpath={.metadata.labels.rail\.rdmanet\.io/$1}"; }
node_rails_are() { [[ "$(node_label leaf-a) $(node_label leaf-b)" == "$1" ]]; }
wait_until 60 "each device's rail (leaf-a on f0 ports, leaf-b on f1) in the slices" rails_are on
wait_until 30 "the node's rail labels (2 ports on each leaf)" node_rails_are "2 2"
annotation=$(kc get node "$node_name" -o 'jsonpath={.metadata.annotations.rdmanet\.io/rails}')
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert sorted(r) == ["leaf-a", "leaf-b"] and all(len(p) == 2 for p in r.values()), r
' "$annotation" || fail "the node's rdmanet.io/rails annotation: $annotation"
claim_pod rail-b "[{name: nic, exactly: {deviceClassName: $nic_class, \
selectors: [{cel: {expression: 'device.attributes[\"rdmanet.io\"].rail == \"leaf-b\"'}}]}}]"
wait_pod_ready rail-b
dev=$(allocated rail-b "$driver")
read -r _ rail_pf rail_got rail_port < <(slice_rails | awk -v d="$dev" '$1 == d')
[[ $rail_pf == *f1 && $rail_got == leaf-b ]] ||
  fail "rail-b's claim selected rail leaf-b, got $dev on $rail_pf (rail $rail_got)"
delete_claim_pod rail-b
# The daemon's token and Nodes: another label of its own Node, or a rail label of another Node,
# is refused by the policy (an update as the daemon makes one: a PUT of the whole object).
# Node controllers write Nodes too (a new Node gets its taints and lifecycle labels a moment after
# it is made): a 409 between the read and the PUT is read again, as the daemon does, up to 5 times.
node_put_as_daemon() { # NODE PYTHON-EXPR-ON-n: the node changed by the expression, PUT as the daemon
  local out _
  for _ in 1 2 3 4 5; do
    if out=$(kc get node "$1" -o json | /usr/bin/python3 -c "
import json, sys
n = json.load(sys.stdin)
$2
print(json.dumps(n))" | as_daemon replace -f - 2>&1); then
      echo "$out"
      return 0
    fi
    [[ $out == *"(Conflict)"* ]] || break
  done
  echo "$out"
  return 1
}
out=$(node_put_as_daemon "$node_name" 'n["metadata"]["labels"]["probe"] = "1"') &&
  fail "the daemon's token added a label that is not a rail to its Node"
[[ $out == *"may change only the rail.rdmanet.io/ labels"* ]] || fail "node label: $out"
out=$(node_put_as_daemon "$node_name" 'n["spec"]["unschedulable"] = True') &&
  fail "the daemon's token cordoned its Node"
[[ $out == *"may not change a Node's spec"* ]] || fail "node spec: $out"
kc create -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata: {name: vap-other-node}
YAML
out=$(node_put_as_daemon vap-other-node 'n["metadata"].setdefault("labels", {})["rail.rdmanet.io/x"] = "1"') &&
  fail "the daemon's token wrote another Node's rails"
[[ $out == *"may write only its own Node"* ]] || fail "other node: $out"
kc delete node vap-other-node >/dev/null
out=$(node_put_as_daemon "$node_name" 'n["metadata"]["labels"]["rail.rdmanet.io/leaf-z"] = "1"') ||
  fail "the daemon's token cannot write a rail label of its own Node: $out"
# The switches shut down (lldpd's TTL-0 frames): the rails go from the slices and the Node.
stop_leaves
wait_until 30 "no rails in the slices once the switches shut down" rails_are off
wait_until 30 "no rail labels on the node" node_rails_are " "
[[ -z $(node_label leaf-z) ]] || fail "the daemon left rail label leaf-z on its Node"
ok "rails from LLDP: each device's leaf in the slices and on the node, a claim for rail leaf-b \
got a VF of an f1 port (port $rail_port), the daemon's token kept to its Node's rail keys"

# --- 4. A NIC claim: prepared by kubelet, applied by containerd (CDI): env, device nodes and the
# device's pod-info (filled by the CNI) are in the container, and the claim's VF is eth1: Multus
# v4.3.0 passes no deviceID for a claim, so rdmanet finds it in the daemon's pod records.
claim_pod nic-1 "$nic_request" "" "$rdma_net"
wait_pod_ready nic-1
pci=$(check_rdma_container nic-1 PCIDEVICE_RDMA_VF)
dev=$(allocated nic-1 "$driver")
eq "the VF of nic-1's claim" "$(slice_devices | awk -v d="$dev" '$1 == d {print $2}')" "$pci"
check_eth1 nic-1 "$pci" no
pod_exec nic-1 test -s "/var/run/rdmanet/$pci/rdmanet.env" || fail "nic-1 lacks its pod info"
check_pod_in_map nic-1 "$pci"
# Its device metadata names the VF; on the node the file is 0644 (a container's non-root user
# reads it) under the daemon's plugin dir, and unprepare removes it.
nic1_claim=$(kc -n "$ns" get pod nic-1 -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}')
eq "nic-1's device metadata" "$meta_versions $nic1_claim nic $pci" \
  "$(metadata_of nic-1 "$meta_dir/resourceclaimtemplates/devs/nic/$driver-metadata.json")"
nic1_uid=$(kc -n "$ns" get resourceclaim "$nic1_claim" -o 'jsonpath={.metadata.uid}')
nic1_meta=$kubelet_dir/plugins/$driver/dra-device-metadata/$nic1_uid
eq "mode of nic-1's metadata file on the node" 644 "$(stat -c %a "$nic1_meta/nic/metadata.json")"
delete_claim_pod nic-1
wait_until 30 "nic-1's device metadata removed by unprepare" test ! -e "$nic1_meta"
wait_until 30 "nic-1's series gone from /metrics" pod_gone_from_map nic-1
wait_until 30 "$pci's netdev back on the host" test -n "$(host_netdev_of "$pci")"
[[ -n $(host_netdev_of "$pci") ]] || fail "$pci's netdev did not come back"
ok "a claim's VF $pci: CDI env, device nodes, pod info and device metadata in the container, eth1 through Multus"

# --- Issue 32, section 1: the claim's status.devices entry for its VF carries eth1's network data
# (interface, IP, MAC) and a Ready condition, in the pod's own namespace: the CNI reports what
# ADD did, the daemon writes it (its RBAC: resourceclaims/status update and, for status.devices
# since 1.36, resourceclaims/driver associated-node:update). The claim is a standalone one, so it
# outlives its pod: after the pod is deleted, our entry is gone from it.
kc apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: netdata, namespace: $ns}
spec:
  devices:
    requests: $nic_request
YAML
workload_pod netdata "cpu: 100m" "$rdma_net" netdata |
  sed 's/resourceClaimTemplateName:/resourceClaimName:/' | kc apply -f - >/dev/null
wait_pod_ready netdata
# (allocated reads a template's claim from the pod's status, which names no standalone claim.)
nd_dev=$(kc -n "$ns" get resourceclaim netdata \
  -o "jsonpath={.status.allocation.devices.results[?(@.driver==\"$driver\")].device}")
[[ -n $nd_dev ]] || fail "the claim netdata has no device of $driver"
nd_mac=$(pod_exec netdata cat /sys/class/net/eth1/address)
# A claim the pod names: its device metadata is under the claim's own name.
eq "netdata's device metadata" \
  "$meta_versions netdata nic $(slice_devices | awk -v d="$nd_dev" '$1 == d {print $2}')" \
  "$(metadata_of netdata "$meta_dir/resourceclaims/netdata/nic/$driver-metadata.json")"
nd_ip=$(pod_exec netdata ip -4 -o addr show dev eth1 | awk '{print $4}')
[[ -n $nd_ip ]] || fail "netdata's eth1 has no IPv4 address"
# net_entry: our entry of the claim's status.devices, read from `kubectl get -o yaml`, as
# "<interfaceName> <ips,> <hardwareAddress> <Ready status>/<reason>"; "" when there is none.
net_entry() {
  kc -n "$ns" get resourceclaim netdata -o yaml | /usr/bin/python3 -c '
import sys, yaml
driver, dev = sys.argv[1], sys.argv[2]
claim = yaml.safe_load(sys.stdin)
for d in claim.get("status", {}).get("devices", []) or []:
    if d["driver"] == driver and d["device"] == dev:
        nd = d.get("networkData", {})
        ready = [c for c in d.get("conditions", []) if c["type"] == "Ready"]
        print(nd.get("interfaceName"), ",".join(nd.get("ips", [])), nd.get("hardwareAddress"),
              ready[0]["status"] + "/" + ready[0]["reason"] if ready else "-")
' "$driver" "$nd_dev"
}
want="eth1 $nd_ip $nd_mac True/InterfaceReady"
entry_is() {
  local e
  e=$(net_entry) || return 1 # a failed read is not an empty entry
  [[ $e == "$1" ]]
}
start=$(date +%s%N)
wait_until 30 "the claim's status.devices to show $want" entry_is "$want"
note networkdata_after_ready_ms $((($(date +%s%N) - start) / 1000000))
yaml=$(kc -n "$ns" get resourceclaim netdata -o yaml)
# (YAML quotes a MAC: unquoted, 02:31:00:00:01:00 would read as a base-60 number.)
for want_re in "interfaceName: eth1" "- ${nd_ip//./\\.}" "hardwareAddress: \"?$nd_mac\"?"; do
  [[ $yaml =~ $want_re ]] || fail "kubectl get resourceclaim -o yaml lacks /$want_re/: $yaml"
done
delete_pod netdata
wait_until 60 "our entry gone from the claim after its pod" entry_is ""
kc -n "$ns" get resourceclaim netdata >/dev/null || fail "the standalone claim went with its pod"
kc -n "$ns" delete resourceclaim netdata --wait >/dev/null
ok "the claim's status.devices showed eth1, $nd_ip and $nd_mac with Ready, and lost them with the pod"

# A claim without an rdmanet network: the pod-info mount's source exists before any ADD.
claim_pod bare-claim "$nic_request"
wait_pod_ready bare-claim
check_rdma_container bare-claim PCIDEVICE_RDMA_VF >/dev/null
delete_claim_pod bare-claim
ok "a claim's pod without an rdmanet network starts (its pod-info mount has a source)"

# --- 4. A GPU and a NIC under one PCIe root, over 10 pods (up to three at once: the node has
# three GPUs with a NIC under their root).
pair_request="[{name: gpu, exactly: {deviceClassName: $gpu_driver}}, {name: nic, exactly: {deviceClassName: $nic_class}}]"
pair_constraint="[{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}]"
live=()
declare -A roots_used=()
for i in $(seq 1 10); do
  claim_pod "pair-$i" "$pair_request" "$pair_constraint" "$rdma_net"
  wait_pod_ready "pair-$i"
  gpu=$(allocated "pair-$i" "$gpu_driver")
  nic=$(allocated "pair-$i" "$driver")
  gpu_pci=${gpus[${gpu#gpu-}]}
  nic_pci=$(slice_devices | awk -v d="$nic" '$1 == d {print $2}')
  eq "PCIe root of pair-$i's NIC $nic_pci (GPU $gpu_pci)" "$(pci_root "$gpu_pci")" "$(pci_root "$nic_pci")"
  eq "pair-$i's container VF" "$nic_pci" "$(pod_env "pair-$i" PCIDEVICE_RDMA_VF)"
  check_eth1 "pair-$i" "$nic_pci" no
  roots_used[$(pci_root "$gpu_pci")]=1
  live+=("pair-$i")
  if ((${#live[@]} == 3)); then
    delete_claim_pod "${live[0]}"
    live=("${live[@]:1}")
  fi
done
for p in "${live[@]}"; do delete_claim_pod "$p"; done
note dra_pairs_pcie_roots "$(printf '%s,' "${!roots_used[@]}")"
ok "10 pods: the scheduler put each NIC under its GPU's PCIe root, and it is their eth1"

# --- 4. A PF's link down taints its VFs; a new claim avoids them; link up removes the taints.
pf=$(basename "$(readlink -f "$simnode_sys/bus/pci/devices/${vfs[0]}/physfn")")
pfdev=$(host_netdev_of "$pf")
mapfile -t pf_vfs < <(for v in "${vfs[@]}"; do
  [[ $(basename "$(readlink -f "$simnode_sys/bus/pci/devices/$v/physfn")") == "$pf" ]] && echo "$v"
done)
tainted_count_is() { [[ $(slice_devices | awk '$4 != "-"' | wc -l) == "$1" ]]; }
ip link set "$pfdev" down
wait_until 30 "${#pf_vfs[@]} tainted devices after $pfdev down" tainted_count_is "${#pf_vfs[@]}"
for v in "${pf_vfs[@]}"; do
  [[ $(slice_devices | awk -v p="$v" '$2 == p {print $4}') == *rdmanet.io/unhealthy* ]] ||
    fail "$v (of $pf, down) is not tainted"
done
# Claims until every untainted VF is taken would be slow; the scheduler's choice among
# untainted devices is what matters: several claims, none lands on a tainted VF.
for i in 1 2 3; do claim_pod "taint-$i" "$nic_request"; done
for i in 1 2 3; do
  wait_pod_ready "taint-$i"
  got=$(pod_env "taint-$i" PCIDEVICE_RDMA_VF)
  for v in "${pf_vfs[@]}"; do [[ $got != "$v" ]] || fail "taint-$i got tainted VF $v"; done
done
for i in 1 2 3; do delete_claim_pod "taint-$i"; done
# A failed prepare is visible: a claim that tolerates the taint and asks for a VF of the PF that
# is down is allocated it, and kubelet's prepare of it fails (the device is unhealthy). The pod
# gets a Warning Event naming its claim and the error, which `kubectl get events` lists; the
# daemon's /metrics counts and times the failure; and once the PF is up, kubelet's next try
# prepares the claim.
bad_vf=${pf_vfs[0]}
claim_pod prepfail "[{name: nic, exactly: {deviceClassName: $nic_class, tolerations: [{operator: Exists}], \
selectors: [{cel: {expression: 'device.attributes[\"resource.kubernetes.io\"].pciBusID == \"$bad_vf\"'}}]}}]"
prepfail_claim() {
  kc -n "$ns" get pod prepfail -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}'
}
# "KIND TYPE MESSAGE" of the Events about prepfail from the driver, one a line.
prepfail_events() {
  kc -n "$ns" get events --field-selector reason=FailedPrepareResourceClaim,involvedObject.name=prepfail \
    -o 'jsonpath={range .items[*]}{.involvedObject.kind} {.type} {.message}{"\n"}{end}'
}
prepare_failed_event() {
  local claim
  claim=$(prepfail_claim) && [[ -n $claim ]] || return 1
  prepfail_events | grep -q "^Pod Warning $driver could not prepare ResourceClaim $ns/$claim: .*unhealthy"
}
wait_until 90 "a FailedPrepareResourceClaim Event on prepfail" prepare_failed_event
kc -n "$ns" get events | grep -q "FailedPrepareResourceClaim.*pod/prepfail" ||
  fail "kubectl get events does not list prepfail's Event: $(kc -n "$ns" get events | tail -5)"
m=$(metrics) || fail "no /metrics"
grep -Eq '^rdmanet_dra_claim_operations_total\{operation="prepare",result="error"\} [1-9]' <<<"$m" ||
  fail "/metrics counts no failed prepare"
grep -Eq '^rdmanet_dra_claim_operation_duration_seconds_bucket\{operation="prepare",le="\+Inf"\} [1-9]' <<<"$m" ||
  fail "/metrics has no prepare latency histogram"
grep -Eq '^rdmanet_dra_events_total\{result="sent"\} [1-9]' <<<"$m" || fail "/metrics counts no Event sent"
ok "a claim on a VF of the PF that is down: its prepare fails, with a Warning Event on the pod \
naming the claim and the error, and the failure on /metrics"
ip link set "$pfdev" up
wait_until 30 "no taints after $pfdev up" tainted_count_is 0
wait_pod_ready prepfail 180
eq "prepfail's VF once its PF is up" "$bad_vf" "$(pod_env prepfail PCIDEVICE_RDMA_VF)"
delete_claim_pod prepfail
ok "PF $pf down: its ${#pf_vfs[@]} VFs tainted and avoided by new claims; up: untainted, and \
the claim whose prepare failed is prepared"

# --- 4. The pool's extended resource with no claim (KEP-5004): served through the chart's
# DeviceClass extendedResourceName.
workload_pod ext-1 "cpu: 100m, rdma/vf: 1" | kc apply -f - >/dev/null
wait_pod_ready ext-1
check_rdma_container ext-1 PCIDEVICE_RDMA_VF >/dev/null
delete_pod ext-1
ok "rdma/vf: 1 without a claim was served through DRA"

# --- 5. Restarts with a claim's pod running: it keeps its devices, the driver serves new claims
# again (time until a new claim's pod is Ready), and the slices are exact.
claim_pod keep "$nic_request" "" "$rdma_net"
wait_pod_ready keep
kept=$(pod_env keep PCIDEVICE_RDMA_VF)
probe=0
slices_exact() { slice_count_is "${#vfs[@]}" && tainted_count_is 0; }
# republished BEFORE: every slice is new (none of BEFORE's UIDs is left) and they are exact.
republished() {
  local now
  now=$(slice_uids) || return 1
  [[ -n $now && -z $(comm -12 <(echo "$1") <(echo "$now")) ]] && slices_exact
}
restart_case() { # NAME wiped|kept COMMAND...
  local name=$1 wiped=$2 start before
  shift 2
  before=$(slice_uids)
  start=$(date +%s%N)
  "$@"
  # Kubelet deletes the node's ResourceSlices of every driver when it starts (its DRA plugin
  # manager, so that nothing is scheduled to a driver that may not come back): the daemon
  # publishes them again when kubelet registers it again. After a kubelet restart, exact slices
  # must be new ones, or the check could pass before kubelet's wipe.
  if [[ $wiped == wiped ]]; then
    wait_until 60 "rdmanet's slices wiped by kubelet and exact again after $name" republished "$before"
  else
    wait_until 60 "rdmanet's slices exact after $name" slices_exact
  fi
  note "slices_exact_ms_dra_$name" $((($(date +%s%N) - start) / 1000000))
  probe=$((probe + 1))
  claim_pod "probe-$probe" "$nic_request"
  wait_pod_ready "probe-$probe" 180
  note "prepare_after_ms_dra_$name" $((($(date +%s%N) - start) / 1000000))
  delete_claim_pod "probe-$probe"
  pod_ready keep || fail "keep is not Ready after $name"
  eq "keep's VF after $name" "$kept" "$(pod_env keep PCIDEVICE_RDMA_VF)"
  check_pod_kept_eth1 keep
  slices_exact || fail "rdmanet's slices after $name and a claim: $(slice_devices | wc -l)"
  ok "$name: keep kept its VF and eth1, the slices are exact, a new claim was prepared"
}
restart_case kubelet_restart wiped restart_kubelet
restart_case daemon_pod_deleted kept delete_daemon_pod
restart_case containerd_restart kept restart_containerd

# --- Issue 23 under the real kubelet: a reboot-like restart. The checkpoint is on disk, the CDI
# dir is a tmpfs on most nodes: the daemon is SIGKILLed with its CDI specs gone. At start it
# renders every checkpointed claim's spec again, so kubelet can recreate a container of a running
# pod (containerd resolves its CDI devices at create); unpreparing then leaves nothing.
RESTART_POLICY=Always claim_pod reboot "$nic_request" "" "$rdma_net"
wait_pod_ready reboot
reboot_vf=$(pod_env reboot PCIDEVICE_RDMA_VF)
reboot_uid=$(kc -n "$ns" get pod reboot -o 'jsonpath={.metadata.uid}')
claim_uid() {
  kc -n "$ns" get resourceclaim "$(kc -n "$ns" get pod "$1" \
    -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}')" -o 'jsonpath={.metadata.uid}'
}
spec_of() { echo "$cdi_dir/rdmanet.io-rdma_$(claim_uid "$1").json"; }
reboot_spec=$(spec_of reboot)
keep_spec=$(spec_of keep)
[[ -s $reboot_spec && -s $keep_spec ]] || fail "no CDI spec for the running claims in $cdi_dir"
daemon_restarts() {
  kc -n rdmanet get pod -l app.kubernetes.io/component=node \
    -o 'jsonpath={.items[0].status.containerStatuses[0].restartCount}'
}
restarts=$(daemon_restarts)
daemon_back() {
  [[ $(daemon_restarts) -gt $restarts ]] &&
    [[ $(kc -n rdmanet get pod -l app.kubernetes.io/component=node \
      -o 'jsonpath={.items[0].status.containerStatuses[0].ready}') == true ]]
}
start=$(date +%s%N)
rm -f "$cdi_dir"/rdmanet.io-*.json
pkill -KILL -f '^/usr/local/bin/rdmanet-device-plugin' || fail "no daemon process to kill"
wait_until 120 "the daemon's container restarted and Ready" daemon_back
specs_back() { [[ -s $reboot_spec && -s $keep_spec ]]; }
wait_until 30 "the lost CDI specs rendered again" specs_back
note respec_ms_dra_reboot_like $((($(date +%s%N) - start) / 1000000))
# Kubelet recreates reboot's container with the claim's CDI devices.
container_restarts() {
  kc -n "$ns" get pod reboot -o 'jsonpath={.status.containerStatuses[0].restartCount}'
}
cid=$(crictl ps -q --name main --label "io.kubernetes.pod.uid=$reboot_uid")
[[ -n $cid ]] || fail "no container of reboot in containerd"
crictl stop --timeout 1 "$cid" >/dev/null
recreated() { [[ $(container_restarts) -ge 1 ]] && pod_ready reboot; }
wait_until 120 "reboot's container recreated and Ready" recreated
eq "reboot's VF after its container was recreated" "$reboot_vf" \
  "$(check_rdma_container reboot PCIDEVICE_RDMA_VF)"
check_pod_kept_eth1 reboot
delete_claim_pod reboot
gone() { [[ ! -e $reboot_spec && ! -e /var/run/rdmanet/dra-devices/$reboot_uid ]]; }
wait_until 30 "reboot's CDI spec and pod records removed" gone
ok "daemon killed with its CDI specs gone: specs rendered again, a container recreated with \
its devices, unprepare left nothing"
delete_claim_pod keep

# --- Issue 32, section 2: VFs as partitions of their PF (KEP-4815). With the pool's
# vfBandwidthMbps at 30000, each VF consumes 30G of a counter set that holds its PF's 100G (the
# simulated port's speed): the real API server takes the counter-set slice, the real scheduler
# allocates 3 of the PF's 4 VFs and leaves a 4th claim pending with its reason, and allocates it
# once one of the three is gone.
# (Section 3's shared pool is installed with it: one helm upgrade for both.)
RDMANET_VF_BANDWIDTH_MBPS=30000 RDMANET_SHARED_CLAIM_MBPS=40000 \
  "$repo/hack/cluster/rdmanet.sh" dra >/dev/null
share_pf=$(basename "$(readlink -f "$simnode_sys/bus/pci/devices/${vfs[0]}/physfn")")
pf_set=$(printf 'pci-%s' "$share_pf" | tr ':.' '--')
# partitions: "<set bandwidth> <devices consuming 30G of it>" as the API server holds them.
partitions() {
  kc get resourceslices -o json | /usr/bin/python3 -c '
import json, sys
driver, node, pf_set = sys.argv[1], sys.argv[2], sys.argv[3]
bw, users = "-", 0
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] != driver or s["spec"].get("nodeName") != node:
        continue
    for c in s["spec"].get("sharedCounters", []):
        if c["name"] == pf_set:
            bw = c["counters"]["bandwidth"]["value"]
    for d in s["spec"].get("devices", []):
        for c in d.get("consumesCounters", []):
            if c["counterSet"] == pf_set and c["counters"]["bandwidth"]["value"] == "30G":
                users += 1
print(bw, users)
' "$driver" "$node_name" "$pf_set"
}
pf_vf_count=0
for v in "${vfs[@]}"; do
  if [[ $(basename "$(readlink -f "$simnode_sys/bus/pci/devices/$v/physfn")") == "$share_pf" ]]; then
    pf_vf_count=$((pf_vf_count + 1))
  fi
done
((pf_vf_count == 4)) || fail "PF $share_pf has $pf_vf_count VFs in the pool, the check needs 4"
partitioned() { [[ $(partitions) == "100G 4" ]]; }
wait_until 120 "counter set $pf_set (100G) and its 4 VFs consuming 30G each" partitioned
on_pf="[{name: nic, exactly: {deviceClassName: $nic_class, \
selectors: [{cel: {expression: 'device.attributes[\"rdmanet.io\"].pfPciAddress == \"$share_pf\"'}}]}}]"
for i in 1 2 3 4; do claim_pod "bw-$i" "$on_pf"; done
for i in 1 2 3; do wait_pod_ready "bw-$i"; done
# pending_for_claims POD: waits until the scheduler finds POD unschedulable, and checks it is
# for the reason it gives for claims it cannot allocate; sets `why` to its message.
unschedulable() {
  [[ $(kc -n "$ns" get pod "$1" -o \
    'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}') == Unschedulable ]]
}
pending_for_claims() {
  wait_until 60 "$1 unschedulable" unschedulable "$1"
  why=$(kc -n "$ns" get pod "$1" -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}')
  [[ $why == *"cannot allocate all claims"* ]] || fail "$1 is pending, but not for its claim: $why"
}
# The fourth.
pending_for_claims bw-4
note partitions_pending_reason "$why"
declare -A bw_vfs=()
for i in 1 2 3; do bw_vfs[$(pod_env "bw-$i" PCIDEVICE_RDMA_VF)]=1; done
((${#bw_vfs[@]} == 3)) || fail "bw-1..3 do not hold 3 distinct VFs: ${!bw_vfs[*]}"
delete_claim_pod bw-1
wait_pod_ready bw-4
for i in 2 3 4; do delete_claim_pod "bw-$i"; done
ok "PF $share_pf's 100G counted by the scheduler: 3 claims of 30G allocated, the 4th pending \
($why) until one went"

# --- Issue 32, section 3: the shared HCA as consumable capacity (KEP-5075). The pool "shared"
# publishes each PF once, for many claims (allowMultipleAllocations), with its 100G as capacity
# rdmanet.io/bandwidth of which a claim takes 40G unless it asks otherwise: 40G + 50G fit, a
# third claim of 40G does not until the 50G one is gone.
shared_class=shared.$driver
# shared_pf_capacity: "<allowMultipleAllocations> <capacity value> <request default>" of the PF.
shared_pf_capacity() {
  kc get resourceslices -o json | /usr/bin/python3 -c '
import json, sys
driver, node, pf = sys.argv[1], sys.argv[2], sys.argv[3]
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] != driver or s["spec"].get("nodeName") != node:
        continue
    for d in s["spec"].get("devices", []):
        if d["attributes"]["resource.kubernetes.io/pciBusID"]["string"] == pf:
            c = d.get("capacity", {}).get("rdmanet.io/bandwidth", {})
            print(d.get("allowMultipleAllocations", False), c.get("value"),
                  c.get("requestPolicy", {}).get("default"))
' "$driver" "$node_name" "$share_pf"
}
shared_published() { [[ $(shared_pf_capacity) == "True 100G 40G" ]]; }
wait_until 60 "PF $share_pf shared with 100G of capacity, 40G a claim" shared_published
kc get deviceclass "$shared_class" >/dev/null || fail "the chart's DeviceClass $shared_class is missing"
on_shared() { # [BANDWIDTH]: a request for the shared PF, asking for BANDWIDTH when given
  local capacity=""
  [[ -n ${1:-} ]] && capacity=", capacity: {requests: {rdmanet.io/bandwidth: $1}}"
  echo "[{name: nic, exactly: {deviceClassName: $shared_class, \
selectors: [{cel: {expression: 'device.attributes[\"resource.kubernetes.io\"].pciBusID == \"$share_pf\"'}}]\
$capacity}}]"
}
# consumed POD: the bandwidth its claim's allocation consumed of the shared PF.
consumed() {
  local claim
  claim=$(kc -n "$ns" get pod "$1" -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}')
  kc -n "$ns" get resourceclaim "$claim" \
    -o 'jsonpath={.status.allocation.devices.results[0].consumedCapacity.rdmanet\.io/bandwidth}'
}
claim_pod cap-1 "$(on_shared)"
wait_pod_ready cap-1
claim_pod cap-2 "$(on_shared 50G)"
wait_pod_ready cap-2
eq "cap-1's share (the pool's default)" 40G "$(consumed cap-1)"
eq "cap-2's share (its own request)" 50G "$(consumed cap-2)"
claim_pod cap-3 "$(on_shared)"
pending_for_claims cap-3
delete_claim_pod cap-2
wait_pod_ready cap-3
eq "cap-3's share" 40G "$(consumed cap-3)"
for i in 1 3; do delete_claim_pod "cap-$i"; done
ok "PF $share_pf shared by claims until its 100G was taken: 40G and 50G allocated, a third 40G \
pending until the 50G claim went"

"$repo/hack/cluster/rdmanet.sh" dra >/dev/null
unpartitioned() { [[ $(partitions) == "- 0" ]] && slices_exact; }
wait_until 120 "the pool without partitions and shared PFs again" unpartitioned
ok "DRA mode under the real cluster"
