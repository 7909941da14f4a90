# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # ns, kc and the others are lib.sh's; g1, g2 and roce_filter are for the sourcing script
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
