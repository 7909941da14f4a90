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
#     from the pod on node 1 to the pod on node 2, every RoCE v2 frame on the switch tagged
#     VLAN 100, priority 3;
#   - each node's daemon counts its pod's RDMA packets under that pod's labels;
#   - the job: an MPI all-reduce (Debian's Open MPI with UCX over the RDMA devices) across both
#     pods, launched through the API by a launcher pod as the MPI operator does (mpi_job.sh),
#     every result checked, its frames on the switch tagged, its RDMA counted under both pods,
#     and `rdmanet-doctor pods` on each node finding no fallback while it runs;
#   - the silent fallback to TCP: the same job with UCX on TCP over eth1; the doctor on each node
#     FAILs its rank ("fell back to TCP"), and each daemon exports the rank's eth1 bytes;
#   - rails: each node's port hears a different leaf (lldpd on the switch side), and each pod's
#     Allocate names its node's rail;
#   - the cross-node pre-flight (`rdmanet-doctor preflight`): clean, and with faults on node 2;
# and then in DRA mode (the chart upgraded to api: dra): each node's VFs published on rail rail0
# (a rule over both leaves' names), one pod per node whose claim selects rail0 with its node's VF
# as eth1, tagged on the switch, the all-reduce between them, the node's rail label, and a claim
# for another rail pending.
# Figures: the VM accelerator, cluster up, both pods created to both Ready, the RDMA bandwidth,
# the all-reduce's bus bandwidth.
# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cluster/vm_job.sh
. "$(dirname "$0")/vm_job.sh"
# shellcheck source=tests/cluster/mpi_job.sh
. "$(dirname "$0")/mpi_job.sh"

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

wait_node_vfs
ok "both VM nodes Ready with 4 real VFs each as rdma/vf ($accel)"

# Rails (issue 32, section 4): each node's igb port hears a different leaf, rail0-leaf<i>, from a
# real LLDP sender (Debian's lldpd) on the switch's side of its port (the host end of the tap
# rdmcd<i>, so the frames go to that VM alone). With the chart's default rule each node's daemon
# names its port's rail after the leaf, and its pod's Allocate hands it over
# (PCIDEVICE_RDMA_VF_RAILS); in DRA mode below, a rule names both ports' rail rail0.
for ((i = 1; i <= nodes; i++)); do start_leaf "rail0-leaf$i" "rdmcd$i"; done
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


# mpi_job TAG: the job, an all-reduce over both ranks through UCX on the nodes' RDMA devices,
# launched through the API (mpi_job.sh); every RoCE v2 frame of it on the switch tagged, its RDMA
# counted under both pods' labels. UCX over Soft-RoCE needs two settings a real RoCE NIC does not:
#   - the GID index (rxe's table has the slave's IPv6 link-local GID first);
#   - UCX_UD_VERBS_ETH_DGID_CHECK=n: UCX's wire-up runs over UD, and UCX 1.13 checks each UD
#     packet's GRH destination against its own GID; on rxe every packet failed that check and was
#     dropped (measured: the ranks' UD endpoints timed out after 30 s, while perftest's UD and RC
#     crossed), so the check is off.
mpi_job() {
  local tag=$1 name=mpi-$1 rows busbw total i
  declare -A before
  [[ $g1 == "$g2" ]] || fail "rxe1's RoCE v2 GID is index $g1, rxe2's $g2: UCX_IB_GID_INDEX is one for all ranks"
  for ((i = 1; i <= nodes; i++)); do before[$i]=$(pod_rdma_packets "$i"); done
  capture_start "$name.pcap" "$roce_filter"
  MPI_UCX_ENV="UCX_IB_GID_INDEX=$g1 UCX_UD_VERBS_ETH_DGID_CHECK=n" \
    mpi_start "$name" rc_verbs,ud_verbs,self rank-1 rank-2 -- -b 8 -e 1M -f 4 -n 5 -w 1 \
    -T 300 -S "/tmp/$name.stop"
  # The doctor, while the job soaks: RDMA moves, so no fallback (and it did read each eth1).
  doctor_during "$name"
  mpi_wait "$name" || {
    sed "s/^/$name: /" "$name.log" >&2
    fail "the all-reduce over RDMA ($tag) failed"
  }
  capture_stop
  rows=$(mpi_rows "$name")
  eq "all-reduce sizes (8 B to 512 KiB by 4)" 9 "$(grep -c . <<<"$rows")"
  eq "all-reduce results wrong, the soak's too" 0 "$(sed -n 's/^# wrong results : //p' "$name.log")"
  eq "the table's #wrong" 0 "$(awk '{s += $8} END {print s + 0}' <<<"$rows")"
  busbw=$(mpi_busbw "$name")
  note "allreduce_busbw_gb_s_$tag" "$busbw"
  note "allreduce_512k_busbw_gb_s_$tag" "$(awk '$1 == 524288 {print $7}' <<<"$rows")"
  total=$(tagged_roce "$name.pcap" 100 "the all-reduce")
  grown() { (($(pod_rdma_packets "$1") > before[$1] + 50)); }
  for ((i = 1; i <= nodes; i++)); do
    wait_until 30 "rank-$i's RDMA packets counted during the all-reduce" grown "$i"
    [[ $(doctor_says "$name" "$i" '.netdev_bytes_per_s > 0 and (.summary | test("fell back") | not)') == true ]] ||
      fail "doctor pods on rdmanet-vm$i during the RDMA job: $(doctor_says "$name" "$i" .summary)"
  done
  ok "MPI all-reduce across the nodes ($tag), launched through the API: 9 sizes and a soak while the doctor read, \
every result right, avg bus bandwidth $busbw GB/s, $total RoCE v2 frames all VLAN 100 priority 3, \
counted under both pods; doctor pods finds no fallback"
}

# doctor_during NAME: once job NAME soaks, `rdmanet-doctor pods` in each node's daemon (which
# reads the pods' eth1 in their namespaces: the chart's podNetns, rdmanet.sh), 5 s apart, both
# nodes at once; the JSON in NAME-doctor-<i>.json. (Exit 1 when a pod FAILs: the JSON decides.)
# Then it ends the soak (allreduce_perf's -S file, in rank 0's pod): the soak lasts as long as
# the doctor needs, however slow the nodes, with -T only its bound.
doctor_during() {
  local i pids=()
  wait_until 300 "$1 soaking" mpi_logged "$1" "# soak:"
  for ((i = 1; i <= nodes; i++)); do
    kc -n rdmanet exec "$(daemon_of "rdmanet-vm$i")" -c device-plugin -- \
      rdmanet-doctor pods --interval 5 --json >"$1-doctor-$i.json" 2>"$1-doctor-$i.err" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || true; done
  pod_exec rank-1 touch "/tmp/$1.stop"
}
# doctor_says NAME I JQ: JQ of rank-i's entry in node i's doctor JSON of job NAME.
doctor_says() {
  jq -r --arg p "$ns/rank-$2" ".pods[] | select(.pod == \$p) | $3" "$1-doctor-$2.json" 2>/dev/null ||
    cat "$1-doctor-$2.err" >&2
}

# fallback_job TAG: the silent fallback to TCP (issue 30, section 3): the same job with UCX on TCP
# over eth1 (and Open MPI told to take UCX's TCP, which it refuses by default), the ranks'
# RDMA devices idle. `doctor pods` on each node names its rank; each daemon exports the rank's
# eth1 bytes under its labels (the chart's RdmanetPodSilentTcpFallback compares them with the
# RDMA counters).
fallback_job() {
  local tag=$1 name=mpi-tcp-$1 i rate
  MPI_UCX_NET_DEVICES=eth1 MPI_MCA="pml_ucx_tls=any pml_ucx_devices=any" \
    mpi_start "$name" tcp,self rank-1 rank-2 -- -b 1M -e 1M -n 2 -w 1 -T 300 -S "/tmp/$name.stop"
  doctor_during "$name"
  mpi_wait "$name" || {
    sed "s/^/$name: /" "$name.log" >&2
    fail "the all-reduce over TCP ($tag) failed"
  }
  eq "all-reduce over TCP: wrong results" 0 "$(sed -n 's/^# wrong results : //p' "$name.log")"
  for ((i = 1; i <= nodes; i++)); do
    [[ $(doctor_says "$name" "$i" '.verdict + " " + (.summary | test("fell back to TCP") | tostring)') == "FAIL true" ]] ||
      fail "doctor pods on rdmanet-vm$i does not name rank-$i's fallback: $(doctor_says "$name" "$i" .summary)"
    rate=$(doctor_says "$name" "$i" '.netdev_bytes_per_s | floor')
    note "fallback_eth1_bytes_per_s_${tag}_rank$i" "$rate"
    curl -fsS --max-time 10 "http://10.244.0.$((1 + i)):9109/metrics" |
      grep -q "^rdmanet_pod_netdev_tx_bytes_total{namespace=\"$ns\",pod=\"rank-$i\"" ||
      fail "rdmanet-vm$i's daemon exports no eth1 bytes of rank-$i"
  done
  ok "the silent fallback to TCP ($tag): doctor pods on each node FAILs its rank (\"fell back to \
TCP\"), each daemon exports the rank's eth1 bytes"
}

roce_all_up
capture_start roce.pcap "$roce_filter"
# perftest from inside the pods: the server in rank-2, the client in rank-1, their exchange over
# the pods' eth1, the RDMA over each node's rxe.
mbps=$(write_bw rank-1 rank-2 rxe1 "$g1" rxe2 "$g2" "${ip[2]}" bw.txt)
capture_stop
note rdma_write_bw_mb_s_cross_node "${mbps:-none}"
total=$(tagged_roce roce.pcap 500 ib_write_bw)
ok "RDMA across nodes, pod to pod: ib_write_bw ${mbps:-(no report)} MB/s, $total RoCE v2 frames, all VLAN 100 priority 3"

counted() { (($(pod_rdma_packets "$1") > 500)); }
for ((i = 1; i <= nodes; i++)); do
  wait_until 30 "rdmanet-vm$i's daemon counting rank-$i's RDMA packets" counted "$i"
done
ok "each node's daemon counts its pod's RDMA packets under the pod's labels"

mpi_rbac
mpi_job deviceplugin
fallback_job deviceplugin

# --- The cross-node pre-flight (issue 30, section 4): `rdmanet-doctor preflight` from this
# machine, as an admin runs it, over every node with rdma/vf. It starts a probe server pod per
# node and then a client pod per ordered pair, one pair at a time, each with a VF as eth1 through
# the NAD; the probes talk RDMA over Soft-RoCE on those VFs (preflight_roce_start, vm_job.sh);
# each node's checklist and counters come from its daemon through the API server's pod proxy.
# A clean cluster passes; a fault on node 2 is named, and nothing else is, one run each:
#   - node 2's VFs at MTU 1000, below the NAD's 1500: only the MTU check fails, naming node 2;
#   - netem delay with jitter on them: the round trips (RTT) of both pairs;
#   - netem loss on them: the lost packets (RDMA retransmits) of both pairs.
# (With two nodes every pair runs through node 2; the faults sit on node 2's side of the link,
# since the host's kernel, the switch's, has no sch_netem.) The run and its TCG thresholds:
# preflight in vm_job.sh.
# pf_names TAG CHECK: run TAG failed (exit 1) with a CHECK problem, on the pairs through
# rdmanet-vm2 (with two nodes, both), and on nothing else: no node's checklist failed.
pf_names() {
  local tag=$1 check=$2
  eq "preflight $tag: exit code" 1 "$pf_rc"
  eq "preflight $tag: verdict" FAIL "$(pf .verdict "$tag")"
  pf '.problems[] | select(.verdict == "FAIL") | .check' "$tag" | grep -qx "$check" ||
    fail "preflight $tag: no $check problem: $(pf '.problems' "$tag")"
  eq "preflight $tag: failing pairs" "rdmanet-vm1->rdmanet-vm2,rdmanet-vm2->rdmanet-vm1" \
    "$(pf '[.pairs[] | select(.verdict == "FAIL") | .from + "->" + .to] | sort | join(",")' "$tag")"
  eq "preflight $tag: nodes whose checklist failed" "" \
    "$(pf '[.nodes[] | select(.checklist == "FAIL") | .node] | join(",")' "$tag")"
  eq "preflight $tag: each client's RDMA device" "1=rxf1,2=rxf2" "$(pf_devices "$tag")"
}

# The rank pods' Soft-RoCE goes first: the probe pods mount the node's whole /dev/infiniband, and
# with another pod's device in sight a probe whose own was never made could pick it.
for ((i = 1; i <= nodes; i++)); do roce_down "$i"; done
# pf_devices TAG: each pair's client device by its node, "1=rxf1,2=rxf2" when each probe used
# the device made for it on its own node.
pf_devices() { pf '[.pairs[] | (.from | .[-1:]) + "=" + (.device | .[0:4])] | sort | join(",")' "$1"; }
capture_start preflight.pcap "$roce_filter"
preflight clean --
capture_stop
eq "preflight on a clean cluster: exit code" 0 "$pf_rc"
total=$(tagged_roce preflight.pcap 100 "the pre-flight's probes")
eq "preflight on a clean cluster: pairs" "rdmanet-vm1->rdmanet-vm2 PASS,rdmanet-vm2->rdmanet-vm1 PASS" \
  "$(pf '[.pairs[] | .from + "->" + .to + " " + .verdict] | sort | join(",")' clean)"
eq "preflight: each client's RDMA device" "1=rxf1,2=rxf2" "$(pf_devices clean)"
eq "preflight: each pair's path MTU, RoCE MTU and traffic class" "1500 1024 104,1500 1024 104" \
  "$(pf '[.pairs[] | "\(.path_mtu) \(.roce_mtu) \(.traffic_class)"] | join(",")' clean)"
eq "preflight: the baseline's nodes" "rdmanet-vm1,rdmanet-vm2" "$(pf '.baseline.nodes | sort | join(",")' clean)"
kc -n "$ns" get configmap rdmanet-preflight-baseline -o json |
  jq -e '.data | has("rdmanet-vm1") and has("rdmanet-vm2")' >/dev/null ||
  fail "the baseline ConfigMap lacks a node"
eq "preflight: probe pods left" "" "$(kc -n "$ns" get pods -l app.kubernetes.io/name=rdmanet-preflight -o name)"
note preflight_rtt_p50_us "$(pf '[.pairs[].rtt_p50_us] | join("/")' clean)"
note preflight_gbps "$(pf '[.pairs[].gbps] | join("/")' clean)"
ok "preflight on the clean VM cluster: both pairs PASS (path MTU 1500, RoCE 1024, TC 104; \
$total RoCE v2 frames on the switch, all VLAN 100 priority 3), the baseline recorded for both \
nodes, no pod left ($(pf '[.pairs[].rtt_p50_us | floor] | join("/")' clean) us p50)"

preflight mtu 1000 -- --count 50
pf_names mtu mtu
eq "preflight mtu: the checks that failed" mtu \
  "$(pf '[.problems[] | select(.verdict == "FAIL") | .check] | unique | join(",")' mtu)"
eq "preflight mtu: the node its MTU problems blame" "node rdmanet-vm2's eth1 MTU 1000" \
  "$(pf '[.problems[] | select(.check == "mtu") | .cause | capture("^(?<n>node [^ ]+ eth1 MTU [0-9]+)").n] | unique | join(",")' mtu)"
ok "preflight names node 2's lowered MTU: $(pf '[.problems[] | select(.check == "mtu")][0].cause' mtu)"

preflight delay "" "delay 200ms 20ms limit 10000" -- --count 50
pf_names delay rtt
ok "preflight names the delay on node 2's port: $(pf '[.problems[] | select(.check == "rtt")][0].message' delay)"

preflight loss "" "loss 20%" -- --count 100
pf_names loss loss
ok "preflight names the loss on node 2's port: $(pf '[.problems[] | select(.check == "loss")][0].message' loss)"

# --- DRA mode on the same VM nodes: the chart upgraded to api: dra, with a rail rule that names a
# port's rail after its leaf's rail ("rail0-leaf1" and "rail0-leaf2": two switches, one rail).
# Each node's daemon publishes its 4 real VFs with rail rail0; one pod per node whose claim
# selects rail rail0 gets a VF of its node as eth1 (mode sriov, VLAN 100, priority 3 on the
# switch), and a claim that selects rail1 stays pending for the scheduler's reason.
for ((i = 1; i <= nodes; i++)); do delete_pod "rank-$i"; done
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
# rail_pod I RAIL: a pod on node I whose claim asks for a VF on RAIL, eth1 the node's network
# (below: one for a rail no port is on).
rail_pod() {
  claim_pod_yaml "rail-$1-$2" "[{name: nic, exactly: {deviceClassName: $nic_class, \
selectors: [{cel: {expression: 'device.attributes[\"rdmanet.io\"].rail == \"$2\"'}}]}}]" "" \
    "k8s.v1.cni.cncf.io/networks: '[{\"name\":\"rdma-vf-$1\",\"namespace\":\"rdmanet\",\"interface\":\"eth1\"}]'" |
    awk -v node="rdmanet-vm$1" '/^kind: Pod$/ {pod = 1} {print} pod && /^spec:$/ {
      print "  nodeSelector: {kubernetes.io/hostname: " node "}"; pod = 0 }' | kc apply -f - >/dev/null
}
# The job's pods again, each VF now through a claim for rail rail0 (one template, a claim per pod).
kc apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: rail0-vf, namespace: $ns}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly:
          deviceClassName: $nic_class
          selectors: [{cel: {expression: 'device.attributes["rdmanet.io"].rail == "rail0"'}}]
YAML
start=$SECONDS
for ((i = 1; i <= nodes; i++)); do rank_pod "$i" rail0-vf | kc apply -f - >/dev/null; done
for ((i = 1; i <= nodes; i++)); do wait_pod_ready "rank-$i" 300; done
note job_start_seconds_dra $((SECONDS - start))
for ((i = 1; i <= nodes; i++)); do
  p=rank-$i
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
pod_exec rank-1 ping -c 5 -W 5 "${ip[2]}" >/dev/null || fail "rank-1 cannot ping rank-2 in DRA mode"
capture_stop
frames=$(tcpdump -r ping-dra.pcap -e -nn 2>/dev/null)
total=$(grep -c . <<<"$frames" || true)
tagged=$(grep -c 'vlan 100, p 3,' <<<"$frames" || true)
((total >= 10)) || fail "only $total frames of the DRA pods on the switch"
eq "DRA pods' frames on the switch tagged VLAN 100 priority 3" "$total" "$tagged"
roce_all_up
mpi_job dra
# (The TCP fallback and the pre-flight run in device-plugin mode only, for CI's 90 minutes: the
# fallback's signal, the daemon's pod counters from the CNI's state, does not depend on the API
# mode; the pre-flight's DRA path (a claim per probe pod from --claim-template) runs against the
# stand-in API server in doctor_preflight_test. Both passed here in DRA mode on 2026-12-07.)
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
