#!/usr/bin/env bash
# rdmanet across nodes (labels cluster and multinode): the control plane on this machine and two
# VM nodes (hack/cluster/vmnodes.sh), each with a real igb SR-IOV NIC on one host bridge (rdmcd,
# the switch), running kubelet and containerd; Multus and rdmanet installed by their charts, the
# NADs mode sriov with VLAN 100 and lossless priority 3 on the nodes' real VFs.
#
# It checks, in device-plugin mode:
#   - both nodes Ready, each advertising its 4 VFs as rdma/vf;
#   - two pods, one per node, each given a VF by kubelet's device manager and wired as eth1 by
#     rdmanet's CNI through Multus;
#   - pod to pod across the nodes over eth1: every frame of theirs on the switch carries VLAN 100
#     and priority 3;
#   - RDMA across the nodes: Soft-RoCE over each pod's VF (hack/vm/roce_pods.sh's arrangement:
#     an ipvlan slave of the pod's eth1 in the node's initial netns carries the rxe), ib_write_bw
#     from node 1 to node 2, and every RoCE v2 frame on the switch tagged VLAN 100, priority 3;
#   - each node's daemon counts its pod's RDMA packets under that pod's labels;
#   - rails: each node's port hears a different leaf (lldpd on the switch side), and each pod's
#     Allocate names its node's rail;
# and then in DRA mode (the chart upgraded to api: dra): each node's VFs published on rail rail0
# (a rule over both leaves' names), one pod per node whose claim selects rail0 with its node's VF
# as eth1, tagged on the switch, the node's rail label, and a claim for another rail pending.
# Figures: the VM accelerator, cluster up, both pods created to both Ready, the RDMA bandwidth.
# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

nodes=2
trap cluster_teardown EXIT
# VM nodes' logs are their consoles (the guests' own disks vanish with them).
vm_logs() {
  local i
  for ((i = 1; i <= nodes; i++)); do
    echo "--- tail of vm$i.log" >&2
    grep -av 'console: \[' "$logs/vm$i.log" 2>/dev/null | tail -n 30 >&2 || true
  done
}
teardown_hooks+=(vm_logs)

"$cluster" down >/dev/null 2>&1 || true
start=$SECONDS
"$cluster" up --api deviceplugin --nodes "$nodes" >cluster-up-multinode.log 2>&1 || {
  grep -av 'console: \[' cluster-up-multinode.log >&2
  fail "cluster up --nodes $nodes"
}
accel=$(sed -n 's/^vm-accel=//p' "$state_dir/cluster.env")
note vm_accel "$accel"
note up_seconds_multinode $((SECONDS - start))
kc create namespace "$ns" >/dev/null
wait_until 60 "default ServiceAccount in $ns" kc -n "$ns" get serviceaccount default

# The daemon's pod is Ready before kubelet has its registration in the node's status.
vfs_of_node() { [[ $(kc get node "$1" -o 'jsonpath={.status.allocatable.rdma/vf}') == 4 ]]; }
for ((i = 1; i <= nodes; i++)); do
  wait_until 120 "rdma/vf of rdmanet-vm$i: its igb's 4 VFs" vfs_of_node "rdmanet-vm$i"
done
ok "both VM nodes Ready with 4 real VFs each as rdma/vf ($accel)"

# One pod per node, each on its node's NAD (rdmanet.sh: one host-local range per node). The pod
# sleeps with an argument of its own, so that the node agent below finds its PID.
rank_pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: rank-$1
  namespace: $ns
  annotations:
    k8s.v1.cni.cncf.io/networks: '[{"name":"rdma-vf-$1","namespace":"rdmanet","interface":"eth1"}]'
spec:
  nodeSelector: {kubernetes.io/hostname: rdmanet-vm$1}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: $workload_image
    imagePullPolicy: Never
    command: [sleep, "8640$1"]
    resources:
      limits: {rdma/vf: "1"}
YAML
}
# A privileged pod in the node's own namespaces (network, PID) with its /dev: what an operator's
# node shell would be. It makes the Soft-RoCE device and runs perftest.
agent_pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: agent-$1, namespace: $ns}
spec:
  nodeSelector: {kubernetes.io/hostname: rdmanet-vm$1}
  hostNetwork: true
  hostPID: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: $workload_image
    imagePullPolicy: Never
    command: [sleep, "8650$1"]
    securityContext: {privileged: true}
    # The node's /dev, live: the Soft-RoCE device's uverbs node appears after the pod starts,
    # and a privileged container's own /dev is a copy made at its start.
    volumeMounts: [{name: dev, mountPath: /dev}]
  volumes: [{name: dev, hostPath: {path: /dev}}]
YAML
}
# Rails (issue 32, section 4): each node's igb port hears a different leaf, rail0-leaf<i>, from a
# real LLDP sender (Debian's lldpd) on the switch's side of its port (the host end of the tap
# rdmcd<i>, so the frames go to that VM alone). With the chart's default rule each node's daemon
# names its port's rail after the leaf, and its pod's Allocate hands it over
# (PCIDEVICE_RDMA_VF_RAILS); in DRA mode below, a rule names both ports' rail rail0.
for ((i = 1; i <= nodes; i++)); do start_leaf "rail0-leaf$i" "rdmcd$i"; done
daemon_of() { # NODE: the rdmanet daemon pod on it
  kc -n rdmanet get pods -l app.kubernetes.io/component=node \
    --field-selector "spec.nodeName=$1" -o 'jsonpath={.items[0].metadata.name}'
}
heard_leaf() { # I: node i's daemon logged rail0-leaf<i> as its port's neighbour
  kc -n rdmanet logs "$(daemon_of "rdmanet-vm$1")" 2>/dev/null |
    grep -q "LLDP neighbour \"rail0-leaf$1\" .* rail \"rail0-leaf$1\""
}
for ((i = 1; i <= nodes; i++)); do
  wait_until 90 "rdmanet-vm$i's daemon hears rail0-leaf$i on its igb port" heard_leaf "$i"
done

# The NCCL hints each pod gets for its VF, from the pool's lossless {priority: 3, dscp: 26}: the
# traffic class NCCL puts in the GRH (DSCP << 2) and the service level. No NCCL_IB_HCA: an igb VF
# has no RDMA device of its own (Soft-RoCE below is the node's, over the pod's eth1).
check_nccl_hints() { # POD
  eq "$1's NCCL_IB_TC" 104 "$(pod_env "$1" NCCL_IB_TC)"
  eq "$1's NCCL_IB_SL" 3 "$(pod_env "$1" NCCL_IB_SL)"
  ! pod_env "$1" NCCL_IB_HCA >/dev/null 2>&1 || fail "$1 has an NCCL_IB_HCA for an igb VF"
}
start=$SECONDS
for ((i = 1; i <= nodes; i++)); do rank_pod "$i" | kc apply -f - >/dev/null; done
for ((i = 1; i <= nodes; i++)); do wait_pod_ready "rank-$i" 300; done
note job_start_seconds $((SECONDS - start))
for ((i = 1; i <= nodes; i++)); do agent_pod "$i" | kc apply -f - >/dev/null; done
for ((i = 1; i <= nodes; i++)); do wait_pod_ready "agent-$i" 300; done

declare -A ip mac
for ((i = 1; i <= nodes; i++)); do
  ip[$i]=$(pod_exec "rank-$i" ip -4 -o addr show dev eth1 | awk '{print $4}')
  ip[$i]=${ip[$i]%/*}
  mac[$i]=$(pod_exec "rank-$i" cat /sys/class/net/eth1/address)
  [[ ${ip[$i]} == 192.168.100.* ]] || fail "rank-$i: eth1 has no address of rdma-vf-$i: '${ip[$i]}'"
  # The VF is one of the node's igb VFs, by its driver, in the pod.
  eq "rank-$i: eth1's driver" igbvf \
    "$(pod_exec "rank-$i" sh -c 'basename "$(readlink /sys/class/net/eth1/device/driver)"')"
done
ok "rank-1 (${ip[1]}) and rank-2 (${ip[2]}) have their nodes' VFs as eth1"
for ((i = 1; i <= nodes; i++)); do
  eq "rank-$i's rail (PCIDEVICE_RDMA_VF_RAILS)" "rail0-leaf$i" \
    "$(pod_env "rank-$i" PCIDEVICE_RDMA_VF_RAILS)"
  check_nccl_hints "rank-$i"
done
ok "each node's port on its own leaf: rank-1 got rail rail0-leaf1, rank-2 rail0-leaf2; NCCL_IB_TC 104 and NCCL_IB_SL 3 in both"

# capture_start FILE FILTER / capture_stop: tcpdump on the switch.
capture_start() {
  tcpdump -i rdmcd -e -nn -U -w "$1" "$2" 2>/dev/null &
  cap_pid=$!
  # tcpdump is listening once the bridge's packet socket exists: wait for it by its counter.
  wait_until 10 "tcpdump on rdmcd" grep -q . "/proc/$cap_pid/net/packet"
}
capture_stop() {
  kill -INT "$cap_pid" 2>/dev/null || true
  wait "$cap_pid" 2>/dev/null || true
}
cap_pid=
teardown_hooks+=(capture_stop)

pair="ether host ${mac[1]} or ether host ${mac[2]}"
capture_start ping.pcap "$pair"
pod_exec rank-1 ping -c 5 -W 5 "${ip[2]}" >/dev/null || fail "rank-1 cannot ping rank-2 over eth1"
pod_exec rank-2 ping -c 5 -W 5 "${ip[1]}" >/dev/null || fail "rank-2 cannot ping rank-1 over eth1"
capture_stop
frames=$(tcpdump -r ping.pcap -e -nn 2>/dev/null)
total=$(grep -c . <<<"$frames" || true)
tagged=$(grep -c 'vlan 100, p 3,' <<<"$frames" || true)
((total >= 20)) || fail "only $total frames of the pods on the switch"
eq "pod frames on the switch tagged VLAN 100 priority 3" "$total" "$tagged"
ok "pod to pod across nodes: $total frames on the switch, all VLAN 100 priority 3"

# Soft-RoCE on node i over rank-i's VF: the slave rsl<i> of its eth1, in the node's initial
# netns (rdma_rxe's socket lives there), with an address of its own.
roce_up() {
  local i=$1 pid
  # (The image's busybox has no pgrep: its processes' command lines, read from /proc.)
  pid=$(pod_exec "agent-$i" sh -c "for p in /proc/[0-9]*; do
      [ \"\$(tr '\\0' ' ' <\$p/cmdline 2>/dev/null)\" = 'sleep 8640$i ' ] && echo \${p#/proc/}
    done 2>/dev/null; true" | head -n1)
  [[ -n $pid ]] || fail "node $i: no PID of rank-$i"
  # /bin/ip, iproute2's: the image's busybox sh runs its own ip applet for a bare `ip`, which
  # ignores `mode l2` (an L3 ipvlan slave sends no frame).
  pod_exec "agent-$i" sh -ec "
    nsenter -t $pid -n /bin/ip link add link eth1 name rsl$i type ipvlan mode l2
    nsenter -t $pid -n /bin/ip link set rsl$i netns 1
    /bin/ip addr add 192.168.78.$i/24 dev rsl$i
    /bin/ip link set rsl$i up
    rdma link add rxe$i type rxe netdev rsl$i" || fail "node $i: Soft-RoCE over rank-$i's VF"
  [[ $(pod_exec "agent-$i" /bin/ip -d link show "rsl$i") == *"ipvlan  mode l2 "* ]] ||
    fail "node $i: rsl$i is not an L2 ipvlan slave"
}
# gid_index I: the RoCE v2 GID index of rxe<i> for its address, once the table has it.
gid_index() {
  pod_exec "agent-$1" sh -c "
    d=/sys/class/infiniband/rxe$1/ports/1
    for g in \$d/gids/*; do
      n=\${g##*/}
      [ \"\$(cat \$g)\" = 0000:0000:0000:0000:0000:ffff:c0a8:4e0$1 ] || continue
      [ \"\$(cat \$d/gid_attrs/types/\$n 2>/dev/null)\" = 'RoCE v2' ] && echo \$n && exit 0
    done
    exit 1"
}
for ((i = 1; i <= nodes; i++)); do roce_up "$i"; done
wait_until 30 "rxe1's RoCE v2 GID" gid_index 1
wait_until 30 "rxe2's RoCE v2 GID" gid_index 2
g1=$(gid_index 1) g2=$(gid_index 2)

# (A filter on udp alone would miss the tagged frames: tcpdump matches VLAN frames only after
# a `vlan` keyword.)
capture_start roce.pcap "udp port 4791 or (vlan and udp port 4791)"
# The server in node 2's own network (the agent's host network), for as long as its exec runs.
pod_exec agent-2 timeout 300 ib_write_bw -d rxe2 -x "$g2" -F -s 65536 -n 500 >bw-server.txt 2>&1 &
server=$!
listening() { pod_exec agent-2 sh -c 'netstat -ltn 2>/dev/null | grep -q ":18515 "'; }
server_output() { [[ ! -s bw-server.txt ]] || sed 's/^/ib_write_bw server: /' bw-server.txt >&2; }
teardown_hooks+=(server_output)
wait_until 60 "ib_write_bw server listening on rdmanet-vm2" listening
# On a loaded TCG vCPU perftest may fail to print its report after a good transfer (as
# roce_pods.sh notes): the frames on the switch and the counters below decide; its report, when
# there is one, gives the figure.
bw=$(pod_exec agent-1 timeout 300 ib_write_bw -d rxe1 -x "$g1" -F -s 65536 -n 500 10.244.0.3 2>&1) ||
  echo "note: ib_write_bw's client exited non-zero: $bw" >&2
wait "$server" || echo "note: ib_write_bw's server exited non-zero" >&2
capture_stop
mbps=$(awk '$1 == 65536 {print $4}' <<<"$bw")
note rdma_write_bw_mb_s_cross_node "${mbps:-none}"
frames=$(tcpdump -r roce.pcap -e -nn 2>/dev/null)
total=$(grep -c . <<<"$frames" || true)
tagged=$(grep -c 'vlan 100, p 3,' <<<"$frames" || true)
((total >= 500)) || fail "only $total RoCE v2 frames on the switch"
eq "RoCE v2 frames on the switch tagged VLAN 100 priority 3" "$total" "$tagged"
ok "RDMA across nodes: ib_write_bw ${mbps:-(no report)} MB/s, $total RoCE v2 frames, all VLAN 100 priority 3"

# Each node's daemon counts its pod's Soft-RoCE traffic under that pod's labels (in packets:
# rxe's counters have no bytes).
pod_rdma_packets() {
  curl -fsS --max-time 10 "http://10.244.0.$((1 + $1)):9109/metrics" |
    awk -v p="pod=\"rank-$1\"" '$1 ~ /^rdmanet_pod_rdma_(tx|rx)_packets_total\{/ && index($1, p) {s += $2}
      END {print s + 0}'
}
counted() { (($(pod_rdma_packets "$1") > 500)); }
for ((i = 1; i <= nodes; i++)); do
  wait_until 30 "rdmanet-vm$i's daemon counting rank-$i's RDMA packets" counted "$i"
done
ok "each node's daemon counts its pod's RDMA packets under the pod's labels"

# --- DRA mode on the same VM nodes: the chart upgraded to api: dra, with a rail rule that names a
# port's rail after its leaf's rail ("rail0-leaf1" and "rail0-leaf2": two switches, one rail).
# Each node's daemon publishes its 4 real VFs with rail rail0; one pod per node whose claim
# selects rail rail0 gets a VF of its node as eth1 (mode sriov, VLAN 100, priority 3 on the
# switch), and a claim that selects rail1 stays pending for the scheduler's reason.
for ((i = 1; i <= nodes; i++)); do delete_pod "rank-$i" "agent-$i"; done
RDMANET_RAIL_RULE='{match: "(rail[0-9]+)-leaf[0-9]+", rail: "$1"}' \
  "$repo/hack/cluster/rdmanet.sh" dra >/dev/null
nic_class=vf.rdma.rdmanet.io
# node_rails NODE: the rail of each of rdmanet's devices on NODE, one a line.
node_rails() {
  kc get resourceslices -o json | /usr/bin/python3 -c '
import json, sys
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] == "rdma.rdmanet.io" and s["spec"].get("nodeName") == sys.argv[1]:
        for d in s["spec"].get("devices", []):
            print(d.get("attributes", {}).get("rdmanet.io/rail", {}).get("string", "-"))
' "$1"
}
on_rail0() { [[ $(node_rails "$1" | sort | uniq -c | awk '{print $1, $2}') == "4 rail0" ]]; }
for ((i = 1; i <= nodes; i++)); do
  wait_until 180 "rdmanet-vm$i's 4 VFs in ResourceSlices, on rail rail0" on_rail0 "rdmanet-vm$i"
done
# rail_pod I RAIL: a pod on node I whose claim asks for a VF on RAIL, eth1 the node's network.
rail_pod() {
  claim_pod_yaml "rail-$1-$2" "[{name: nic, exactly: {deviceClassName: $nic_class, \
selectors: [{cel: {expression: 'device.attributes[\"rdmanet.io\"].rail == \"$2\"'}}]}}]" "" \
    "k8s.v1.cni.cncf.io/networks: '[{\"name\":\"rdma-vf-$1\",\"namespace\":\"rdmanet\",\"interface\":\"eth1\"}]'" |
    awk -v node="rdmanet-vm$1" '/^kind: Pod$/ {pod = 1} {print} pod && /^spec:$/ {
      print "  nodeSelector: {kubernetes.io/hostname: " node "}"; pod = 0 }' | kc apply -f - >/dev/null
}
start=$SECONDS
for ((i = 1; i <= nodes; i++)); do rail_pod "$i" rail0; done
for ((i = 1; i <= nodes; i++)); do wait_pod_ready "rail-$i-rail0" 300; done
note job_start_seconds_dra $((SECONDS - start))
for ((i = 1; i <= nodes; i++)); do
  p=rail-$i-rail0
  ip[$i]=$(pod_exec "$p" ip -4 -o addr show dev eth1 | awk '{print $4}')
  ip[$i]=${ip[$i]%/*}
  mac[$i]=$(pod_exec "$p" cat /sys/class/net/eth1/address)
  eq "$p: eth1's driver" igbvf \
    "$(pod_exec "$p" sh -c 'basename "$(readlink /sys/class/net/eth1/device/driver)"')"
  check_nccl_hints "$p"
  vf=$(pod_env "$p" PCIDEVICE_RDMA_VF)
  eq "$p: eth1 is its claim's VF" "$vf" \
    "$(pod_exec "$p" sh -c 'basename "$(readlink /sys/class/net/eth1/device)"')"
done
pair="ether host ${mac[1]} or ether host ${mac[2]}"
capture_start ping-dra.pcap "$pair"
pod_exec rail-1-rail0 ping -c 5 -W 5 "${ip[2]}" >/dev/null || fail "rail-1-rail0 cannot ping rail-2-rail0"
capture_stop
frames=$(tcpdump -r ping-dra.pcap -e -nn 2>/dev/null)
total=$(grep -c . <<<"$frames" || true)
tagged=$(grep -c 'vlan 100, p 3,' <<<"$frames" || true)
((total >= 10)) || fail "only $total frames of the DRA pods on the switch"
eq "DRA pods' frames on the switch tagged VLAN 100 priority 3" "$total" "$tagged"
rail_pod 1 rail1
claim_pending() {
  [[ $(kc -n "$ns" get pod rail-1-rail1 -o \
    'jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}') == *"cannot allocate all claims"* ]]
}
wait_until 120 "rail-1-rail1 pending: no VF on rail rail1" claim_pending
# Each node's rail, for a scheduler: one port on rail0.
rail0_label_is_1() {
  [[ $(kc get node "$1" -o 'jsonpath={.metadata.labels.rail\.rdmanet\.io/rail0}') == 1 ]]
}
for ((i = 1; i <= nodes; i++)); do
  wait_until 30 "rdmanet-vm$i labelled rail.rdmanet.io/rail0=1" rail0_label_is_1 "rdmanet-vm$i"
done
ok "DRA on the VM nodes: a claim per node for rail rail0 got its node's VF as eth1 ($total \
frames across, all VLAN 100 priority 3), a claim for rail1 stays pending"
