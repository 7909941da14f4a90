# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # ns, kc and the others are lib.sh's; g1, g2, roce_filter, pf_rc and pf_seconds are for the sourcing script
# A job's pods on the VM cluster's nodes and the RDMA between them (hack/cluster/vmnodes.sh), for
# cluster.multinode and bench/multinode.sh. Sourced after tests/cluster/lib.sh; `nodes` is the
# number of VM nodes.
#
#   wait_node_vfs                           every node advertises its igb's 4 VFs as rdma/vf
#   rank_pod I [TEMPLATE] | kc apply -f -   the job's pod rank-I on node I (VF by rdma/vf, or
#                                           by a claim from TEMPLATE)
#   agent_pod I | kc apply -f -             agent-I: a node shell (host network and PIDs, /dev)
#   daemon_of NODE                          rdmanet's daemon pod on NODE
#   capture_start FILE FILTER / capture_stop   tcpdump on the switch (the bridge rdmcd)
#   roce_up I / roce_down I / roce_all_up   Soft-RoCE rxe<I> over rank-I's VF (g1, g2: GIDs)
#   pod_rdma_packets I                      rank-I's RDMA packets as node I's daemon counts them
#   tagged_roce PCAP MIN WHAT               every RoCE v2 frame in PCAP tagged VLAN 100 prio 3
#   preflight TAG [MTU [NETEM]] -- ARGS    `rdmanet-doctor preflight` over the nodes (faults on
#                                           node 2); pf JQ TAG reads its JSON
#   write_bw CLIENT SERVER DEV_C GID_C DEV_S GID_S ADDR OUT
#                                           ib_write_bw from pod CLIENT to pod SERVER (ADDR,
#                                           the exchange's TCP); MB/s on stdout, or nothing when
#                                           perftest gave no figure; its output in OUT

# The daemon's pod is Ready before kubelet has its registration in the node's status: wait for it.
wait_node_vfs() {
  local i
  vfs_of_node() { [[ $(kc get node "$1" -o 'jsonpath={.status.allocatable.rdma/vf}') == 4 ]]; }
  for ((i = 1; i <= nodes; i++)); do
    wait_until 120 "rdma/vf of rdmanet-vm$i: its igb's 4 VFs" vfs_of_node "rdmanet-vm$i"
  done
}
# rank_pod I [TEMPLATE]: the job's pod on node I, on its node's NAD (rdmanet.sh: one host-local
# range per node), its VF through rdma/vf, or with TEMPLATE through a claim made from that
# ResourceClaimTemplate. It sleeps with an argument of its own, so that the node agent below
# finds its PID. An igb VF has no RDMA function: the RDMA device (rxe<i>, below) is made by the
# node over an ipvlan slave of the pod's eth1 after the pod starts, so the daemon has no uverbs
# node to hand out (on a NIC with RDMA VFs it hands the VF's own, as the simulated node's tests
# show), and the pod mounts the node's /dev/infiniband instead: privileged, for the device
# cgroup's leave to open it and for the locked memory of the buffers UCX registers.
rank_pod() {
  local res='limits: {rdma/vf: "1"}' claims=''
  if [[ -n ${2:-} ]]; then
    res='claims: [{name: nic}]'
    claims="resourceClaims: [{name: nic, resourceClaimTemplateName: $2}]"
  fi
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
  $claims
  containers:
  - name: main
    image: $workload_image
    imagePullPolicy: Never
    command: [sleep, "8640$1"]
    resources:
      $res
    securityContext: {privileged: true}
    volumeMounts: [{name: ib, mountPath: /dev/infiniband}]
  volumes: [{name: ib, hostPath: {path: /dev/infiniband, type: DirectoryOrCreate}}]
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
daemon_of() { # NODE: the rdmanet daemon pod on it
  kc -n rdmanet get pods -l app.kubernetes.io/component=node \
    --field-selector "spec.nodeName=$1" -o 'jsonpath={.items[0].metadata.name}'
}
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
# roce_down I: node i's rxe and its slave gone (before the rank's pod goes: its VF returns to the
# node, and the next pod's may be the same one).
roce_down() {
  pod_exec "agent-$1" sh -c "rdma link delete rxe$1; /bin/ip link delete rsl$1" >/dev/null 2>&1 || true
}
# roce_all_up: rxe<i> over rank-i's VF on every node; sets g1 and g2, their RoCE v2 GID indexes.
roce_all_up() {
  for ((i = 1; i <= nodes; i++)); do roce_up "$i"; done
  wait_until 30 "rxe1's RoCE v2 GID" gid_index 1
  wait_until 30 "rxe2's RoCE v2 GID" gid_index 2
  g1=$(gid_index 1) g2=$(gid_index 2)
}
# Each node's daemon counts its pod's Soft-RoCE traffic under that pod's labels (in packets:
# rxe's counters have no bytes).
pod_rdma_packets() {
  curl -fsS --max-time 10 "http://10.244.0.$((1 + $1)):9109/metrics" |
    awk -v p="pod=\"rank-$1\"" '$1 ~ /^rdmanet_pod_rdma_(tx|rx)_packets_total\{/ && index($1, p) {s += $2}
      END {print s + 0}'
}
# tagged_roce PCAP MIN WHAT: every RoCE v2 frame in PCAP (at least MIN) carries VLAN 100 and
# priority 3; prints their number.
tagged_roce() {
  local frames total tagged
  frames=$(tcpdump -r "$1" -e -nn 2>/dev/null)
  total=$(grep -c . <<<"$frames" || true)
  tagged=$(grep -c 'vlan 100, p 3,' <<<"$frames" || true)
  ((total >= $2)) || fail "only $total RoCE v2 frames of $3 on the switch"
  eq "$3's RoCE v2 frames on the switch tagged VLAN 100 priority 3" "$total" "$tagged"
  echo "$total"
}
cap_pid=
teardown_hooks+=(capture_stop)
# (A filter on udp alone would miss the tagged frames: tcpdump matches VLAN frames only after
# a `vlan` keyword.)
roce_filter="udp port 4791 or (vlan and udp port 4791)"

write_bw() {
  local client=$1 server=$2 out=$8 pid bw
  listening() { pod_exec "$server" sh -c 'netstat -ltn 2>/dev/null | grep -q ":18515 "'; }
  pod_exec "$server" timeout 300 ib_write_bw -d "$5" -x "$6" -F -s 65536 -n 500 >"$out.server" 2>&1 &
  pid=$!
  wait_until 60 "ib_write_bw server listening in $server" listening
  # On a loaded TCG vCPU perftest may fail to print its report after a good transfer (as
  # roce_pods.sh notes), or print 0.00 (its cycle counter is no clock there): the caller's frames
  # and counters decide; a report, when there is one, gives the figure.
  pod_exec "$client" timeout 300 ib_write_bw -d "$3" -x "$4" -F -s 65536 -n 500 "$7" >"$out" 2>&1 ||
    echo "note: ib_write_bw's client in $client exited non-zero" >&2
  wait "$pid" || echo "note: ib_write_bw's server in $server exited non-zero" >&2
  bw=$(awk '$1 == 65536 && $4 > 0 {print $4}' "$out")
  echo "$bw"
}

# Soft-RoCE for the pre-flight's probe pods (`rdmanet-doctor preflight`), as a NIC with RDMA VFs
# would give each pod its VF's own RDMA device: a loop on node i's agent finds every process of
# the probe (`rdmanet-device-plugin doctor probe`) outside the node's netns, and for each netns
# not yet served makes roce_up's arrangement over its eth1: an L2 ipvlan slave rsf<i><n> in the
# node's netns with an address of its own in 192.168.77.0/24 and rxf<i><n> over it. The probe
# picks that device by its node GUID (the slave shares eth1's MAC; probe.h). The node answers
# ARP only on the interface that holds the address (arp_ignore 1): its slaves share one subnet
# on different VFs, and a reply from the wrong one would send the peer's frames to the wrong VF.
# Faults for the pre-flight to find, on each served pod's eth1 first (node i's side of the link):
# MTU, its MTU; NETEM, a netem qdisc (with a pfifo under it, so that jitter does not reorder:
# tc-netem(8); both long enough for the probe's 1024 packets in flight at 200 ms). The host's
# kernel has no sch_netem; the guests' Debian kernel has.
#   preflight_roce_start I [MTU [NETEM]] / preflight_roce_stop: the loops up; stopped, rxf*/rsf*
#   gone.
preflight_roce_pids=()
preflight_roce_start() {
  local i=$1 mtu=${2:-} netem=${3:-}
  pod_exec "agent-$i" sh -c 'echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore
    echo 2 >/proc/sys/net/ipv4/conf/all/arp_announce; rm -f /tmp/pf-served /tmp/pf-stop'
  pod_exec "agent-$i" sh -c "
    n=0
    self=\$(readlink /proc/1/ns/net)
    until [ -e /tmp/pf-stop ]; do
      for f in \$(grep -l 'rdmanet-device-plugin' /proc/[0-9]*/cmdline 2>/dev/null); do
        p=\${f%/cmdline}
        grep -q 'probe' \$f 2>/dev/null || continue
        net=\$(readlink \$p/ns/net 2>/dev/null) || continue
        [ \"\$net\" = \"\$self\" ] && continue
        grep -qxF \"\$net\" /tmp/pf-served 2>/dev/null && continue
        pid=\${p#/proc/}
        k=$i\$((n + 1))
        ${mtu:+nsenter -t \$pid -n /bin/ip link set eth1 mtu $mtu || continue}
        ${netem:+nsenter -t \$pid -n /sbin/tc qdisc add dev eth1 root handle 1: netem $netem || continue}
        ${netem:+nsenter -t \$pid -n /sbin/tc qdisc add dev eth1 parent 1:1 pfifo limit 10000 || continue}
        nsenter -t \$pid -n /bin/ip link add link eth1 name rsf\$k type ipvlan mode l2 || continue
        n=\$((n + 1))
        nsenter -t \$pid -n /bin/ip link set rsf\$k netns 1 &&
          /bin/ip addr add 192.168.77.\$((10 * $i + n))/24 dev rsf\$k &&
          /bin/ip link set rsf\$k up &&
          rdma link add rxf\$k type rxe netdev rsf\$k &&
          echo \"\$net\" >>/tmp/pf-served && echo \"served \$pid: rxf\$k\"
      done
      sleep 0.5
    done" >"preflight-roce-$i.log" 2>&1 &
  preflight_roce_pids+=($!)
}
preflight_roce_stop() {
  local i
  for ((i = 1; i <= nodes; i++)); do
    pod_exec "agent-$i" sh -c 'touch /tmp/pf-stop
      for d in $(rdma link show 2>/dev/null | sed -n "s/^link \(rxf[0-9]*\)\/.*/\1/p"); do
        rdma link delete $d; done
      for l in $(/bin/ip -o link show | sed -n "s/^[0-9]*: \(rsf[0-9]*\)@.*/\1/p"); do
        /bin/ip link delete $l; done' >/dev/null 2>&1 || true
  done
  if ((${#preflight_roce_pids[@]})); then wait "${preflight_roce_pids[@]}" 2>/dev/null || true; fi
  preflight_roce_pids=()
}
teardown_hooks+=(preflight_roce_stop)
# preflight TAG [MTU [NETEM]] -- [ARGS...]: `rdmanet-doctor preflight` from this machine (the
# build's binary, the admin's kubeconfig) over both nodes, their probe pods with Soft-RoCE
# (preflight_roce_start), node 2's with those faults; the chart's image for the probe pods, each
# node's NAD as their eth1. The thresholds are TCG's (on real NICs the defaults: 90 % of the port,
# RTT p99 1 ms, p99/p50 4, no loss): its Soft-RoCE moves a few MB/s (1-3 % of rxe's 2.5 Gbit/s),
# its round trips take 2-37 ms at the median with a p99 up to 270 ms (a stalled vCPU), and a
# stall past the probe QP's ACK time-out retransmits (7-22 a pair at 67 ms; it waits 268 ms): so a
# 0.1 % floor, a median ceiling of 100 ms in place of the p99's, no spread limit and 10 loss
# events allowed. The faults the test injects are well past all four. The JSON in preflight-TAG.json,
# the exit code in pf_rc, the wall time in pf_seconds (and a figure).
preflight() {
  local tag=$1 faults=() start image
  shift
  while [[ $1 != -- ]]; do
    faults+=("$1")
    shift
  done
  shift
  preflight_roce_start 1
  preflight_roce_start 2 "${faults[@]}"
  image=$(kc -n rdmanet get ds rdmanet -o 'jsonpath={.spec.template.spec.containers[0].image}')
  start=$SECONDS
  pf_rc=0
  "${BUILD_DIR:-$repo/build}/deviceplugin/doctor/rdmanet-doctor" preflight \
    --kubeconfig "$kubeconfig" --namespace "$ns" --image "$image" --image-pull-policy Never \
    --privileged --daemon-namespace rdmanet \
    --node-network rdmanet-vm1=rdmanet/rdma-vf-1 --node-network rdmanet-vm2=rdmanet/rdma-vf-2 \
    --bw-percent 0.1 --rtt-p99-max-us 1000000 --rtt-p50-max-us 100000 --rtt-spread-max 1000000 \
    --loss-max 10 --timeout 300 "$@" --json \
    >"preflight-$tag.json" 2>"preflight-$tag.err" || pf_rc=$?
  pf_seconds=$((SECONDS - start))
  note "preflight_seconds_$tag" "$pf_seconds"
  preflight_roce_stop
  jq -e . "preflight-$tag.json" >/dev/null 2>&1 || {
    cat "preflight-$tag.err" >&2
    fail "preflight $tag: no JSON report (exit $pf_rc)"
  }
}
# pf JQ TAG: JQ over run TAG's report.
pf() { jq -r "$1" "preflight-$2.json"; }
