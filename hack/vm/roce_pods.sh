# shellcheck shell=bash disable=SC2034,SC2015 # ROCE_* are read by the sourcing scripts
# RoCE v2 traffic between two pods in the VM, with Soft-RoCE. Guest scripts source it after
# lib.sh:
#
#   source "$RDMANET_VM_DIR/lib.sh"
#   source "$RDMANET_VM_DIR/roce_pods.sh"
#   roce_pods_up CNI_BIN PRIO      # two pods, a VF each through the rdmanet CNI (sriov mode,
#                                  # VLAN 100, lossless priority PRIO, MTU 9000), then the RDMA
#                                  # arrangement below; fails with a message on stderr
#   roce_perftest "$ROCE_NS_A" "$ROCE_NS_B" "$ROCE_POD_IP_B" OUT ib_write_bw ARGS...
#                                  # perftest from pod a to pod b (server in b): by hand it is
#   ip netns exec "$ROCE_NS_B" ib_write_bw -d "$ROCE_DEV_B" -x "$ROCE_GID_B" &   # server, pod b
#   roce_wait_tcp "$ROCE_NS_B" 18515
#   ip netns exec "$ROCE_NS_A" ib_write_bw -d "$ROCE_DEV_A" -x "$ROCE_GID_A" "$ROCE_POD_IP_B"
#   roce_capture_start FILE        # capture on pod b's PF: RoCE frames from pod a, tagged
#   ...; roce_capture_stop         # (ROCE_CAPTURE_V=1: verbose, roce_capture_dscps reads it)
#   roce_pods_down                 # everything undone (also safe after a failed roce_pods_up)
#   roce_test_begin NAME CNI_BIN PRIO   # a test's start: $work, the EXIT trap, the pods up
#
# Pods that already have their VFs (the demo's) take only the RDMA part:
#   roce_link NS_A IF_A NS_B IF_B  /  roce_unlink
#
# Why this shape (measured on Debian 12's 6.1 kernel, the same on 6.12): on the
# Debian 12 kernels a Soft-RoCE device made inside a pod's netns never sends a packet, since
# rdma_rxe opens its UDP 4791 socket in the initial netns only, and rxe cannot change netns. So
# each pod's VF gets an L2 ipvlan slave that is moved to the initial netns and carries the rxe
# (ROCE_DEV_A/B). Its frames leave through the VF, so the VF's VLAN and QoS (the PF's "vlan 100
# qos P", set by the CNI) apply to them. Both slaves' addresses (ROCE_IP_A/B) are then local to
# one netns, so policy routing with one `oif` rule per direction sends A->B out of A's slave, the
# local table moved behind those rules; `iif lo` rules would break rdma_cm (REJECTED, error 28).
# perftest runs from the pods (its TCP exchange crosses the pods' own network) with `-x <GID
# index>`, never -R, which silently takes the loopback path; rping runs in the initial netns
# with `-I $ROCE_IP_A`.
#
# The capture: the peer PF never sees unicast frames addressed to one of its VFs. While a capture
# runs, the sender's neighbour entry for the peer is ff:ff:ff:ff:ff:ff; the peer VF still takes
# the frames (ipvlan dispatches them by IP) and the peer PF now receives them too.
#
# Sets: ROCE_NS_A/B, ROCE_IF (pod interface), ROCE_VF_A/B (PCI), ROCE_PF_A/B (netdevs),
# ROCE_POD_IP_A/B, ROCE_IP_A/B, ROCE_DEV_A/B, ROCE_GID_A/B, ROCE_MAC_A/B (the VFs' MACs).

ROCE_NS_A=roce-a ROCE_NS_B=roce-b ROCE_IF=net1
ROCE_POD_IP_A=192.168.77.1 ROCE_POD_IP_B=192.168.77.2
ROCE_IP_A=192.168.78.1 ROCE_IP_B=192.168.78.2
ROCE_DEV_A=rxsa ROCE_DEV_B=rxsb
_roce_slave_a=rsla _roce_slave_b=rslb _roce_table_a=177 _roce_table_b=178
_roce_work='' _roce_linked=0 _roce_cni_bin=''

_roce_err() { echo "roce_pods: $*" >&2; }

# roce_gid_index DEV IPV4: the index of DEV's RoCE v2 GID for IPV4 (::ffff:a.b.c.d).
roce_gid_index() {
  local want g a b c d
  IFS=. read -r a b c d <<<"$2"
  printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
  for g in /sys/class/infiniband/"$1"/ports/1/gids/*; do
    [[ $(<"$g") == "$want" &&
      $(<"/sys/class/infiniband/$1/ports/1/gid_attrs/types/${g##*/}") == "RoCE v2" ]] || continue
    echo "${g##*/}"
    return 0
  done 2>/dev/null
  return 1
}

# roce_wait_tcp NS PORT [TIMEOUT=60]: waits until a TCP socket listens on PORT in netns NS
# (perftest's server, before its client starts).
roce_wait_tcp() {
  vm_poll "${3:-60}" bash -c "ip netns exec '$1' ss -Hltn 'sport = :$2' | grep -q ."
}

# roce_perftest NS_A NS_B PEER_IP OUT PROG ARGS...: one perftest PROG run over the RDMA devices
# of roce_link/roce_pods_up, its server in netns NS_B, its client in NS_A against PEER_IP; the
# client's output in OUT, the server's in OUT.server. Passes when both end with 0. perftest
# reports only after calibrating its cycle counter against the clock (r^2 >= 0.9), which a
# loaded TCG vCPU can fail after a good transfer ("Can't produce a report"): such a run is made
# again, three runs in all, saying so on stderr.
roce_perftest() {
  local ns_a=$1 ns_b=$2 peer=$3 out=$4 prog=$5 attempt server again rc=1
  shift 5
  for attempt in 1 2 3; do
    rc=0
    ip netns exec "$ns_b" timeout 240 "$prog" -d "$ROCE_DEV_B" -x "$ROCE_GID_B" "$@" \
      >"$out.server" 2>&1 &
    server=$!
    if ! roce_wait_tcp "$ns_b" 18515; then
      _roce_err "$prog: the server in $ns_b did not listen"
      kill "$server" 2>/dev/null
      wait "$server"
      return 1
    fi
    ip netns exec "$ns_a" timeout 240 "$prog" -d "$ROCE_DEV_A" -x "$ROCE_GID_A" "$@" "$peer" \
      >"$out" 2>&1 || rc=$?
    wait "$server" || rc=$?
    ((rc != 0)) && grep -q "Can't produce a report" "$out" "$out.server" || return "$rc"
    again=''
    ((attempt < 3)) && again='; running it again'
    _roce_err "$prog: run $attempt of 3 could not calibrate perftest's clock (a loaded CPU)$again"
  done
  return "$rc"
}

_roce_sysctls() {
  local k
  for k in all default "$@"; do
    sysctl -qw "net.ipv4.conf.$k.accept_local=1" "net.ipv4.conf.$k.rp_filter=0" || return 1
  done
}

# roce_link NS_A IF_A NS_B IF_B: the RDMA arrangement over two pods' VFs (set up, with carrier).
roce_link() {
  local ns_a=$1 if_a=$2 ns_b=$3 if_b=$4
  ROCE_MAC_A=$(mac_of -n "$ns_a" "$if_a") && ROCE_MAC_B=$(mac_of -n "$ns_b" "$if_b") ||
    { _roce_err "no $if_a in $ns_a or $if_b in $ns_b" && return 1; }
  _roce_linked=1
  ip -n "$ns_a" link add link "$if_a" name "$_roce_slave_a" type ipvlan mode l2 &&
    ip -n "$ns_a" link set "$_roce_slave_a" netns 1 &&
    ip -n "$ns_b" link add link "$if_b" name "$_roce_slave_b" type ipvlan mode l2 &&
    ip -n "$ns_b" link set "$_roce_slave_b" netns 1 || { _roce_err "ipvlan slaves" && return 1; }
  _roce_sysctls "$_roce_slave_a" "$_roce_slave_b" || { _roce_err "sysctls" && return 1; }
  local s addr t peer mac
  for s in a b; do
    if [[ $s == a ]]; then
      set -- "$_roce_slave_a" "$ROCE_IP_A" "$_roce_table_a" "$ROCE_IP_B" "$ROCE_MAC_B"
    else
      set -- "$_roce_slave_b" "$ROCE_IP_B" "$_roce_table_b" "$ROCE_IP_A" "$ROCE_MAC_A"
    fi
    s=$1 addr=$2 t=$3 peer=$4 mac=$5
    ip addr add "$addr/32" dev "$s" && ip link set "$s" up &&
      ip route add "$peer/32" dev "$s" table "$t" &&
      ip rule add pref 10 from "$addr" to "$peer" oif "$s" lookup "$t" &&
      ip neigh replace "$peer" lladdr "$mac" dev "$s" nud permanent ||
      { _roce_err "addressing and routes of $s" && return 1; }
  done
  # The local table (pref 0) would deliver A->B inside this netns: it goes behind the rules.
  if ip rule show pref 0 | grep -q .; then
    ip rule add pref 100 lookup local && ip rule del pref 0 || { _roce_err "rules" && return 1; }
  fi
  rdma link add "$ROCE_DEV_A" type rxe netdev "$_roce_slave_a" &&
    rdma link add "$ROCE_DEV_B" type rxe netdev "$_roce_slave_b" ||
    { _roce_err "rdma link add" && return 1; }
  # The GID table fills asynchronously after the rxe appears.
  vm_poll 30 roce_gid_index "$ROCE_DEV_A" "$ROCE_IP_A" >/dev/null &&
    vm_poll 30 roce_gid_index "$ROCE_DEV_B" "$ROCE_IP_B" >/dev/null ||
    { _roce_err "no RoCE v2 GID for the slaves' addresses" && return 1; }
  ROCE_GID_A=$(roce_gid_index "$ROCE_DEV_A" "$ROCE_IP_A")
  ROCE_GID_B=$(roce_gid_index "$ROCE_DEV_B" "$ROCE_IP_B")
}

# roce_unlink: undoes roce_link (whatever part of it was done).
roce_unlink() {
  ((_roce_linked)) || return 0
  roce_capture_stop
  rdma link del "$ROCE_DEV_A" 2>/dev/null
  rdma link del "$ROCE_DEV_B" 2>/dev/null
  ip link del "$_roce_slave_a" 2>/dev/null
  ip link del "$_roce_slave_b" 2>/dev/null
  while ip rule del pref 10 2>/dev/null; do :; done
  ip route flush table "$_roce_table_a" 2>/dev/null
  ip route flush table "$_roce_table_b" 2>/dev/null
  if ! ip rule show pref 0 | grep -q .; then
    ip rule add pref 0 lookup local && ip rule del pref 100
  fi
  _roce_linked=0
}

# roce_capture_start FILE [PEER_PF]: tcpdump of RoCE v2 (UDP 4791) on pod b's PF (or PEER_PF)
# into FILE, with the broadcast-neighbour trick on pod a's slave. igb drops tagged frames it has
# no VLAN filter for, so a VLAN 100 device on the PF opens it for the capture. ROCE_CAPTURE_V=1:
# `tcpdump -v`, which adds the IPv4 header (tos, ttl, ...) on each frame's first line and moves
# the addresses to a second one; roce_capture_frames joins them.
roce_capture_start() {
  local pf=${2:-$ROCE_PF_B} v=()
  [[ ${ROCE_CAPTURE_V:-0} == 1 ]] && v=(-v)
  _roce_cap_pf=$pf
  ip link add link "$pf" name roce-cap type vlan id 100 && ip link set roce-cap up || return 1
  ip neigh replace "$ROCE_IP_B" lladdr ff:ff:ff:ff:ff:ff dev "$_roce_slave_a" nud permanent
  vm_capture_start "$pf" "$1" "${v[@]}" udp port 4791
}

# roce_capture_frames FILE: the capture, one line per frame (a -v capture's continuation lines,
# which start with white space, appended to their frame's line).
roce_capture_frames() {
  awk '/^[ \t]/ { line = line " " $0; next } { if (line != "") print line; line = $0 }
    END { if (line != "") print line }' "$1"
}

# roce_capture_dscps FILE: the DSCP (the IPv4 TOS byte's upper six bits) of every RoCE v2 frame
# in a -v capture, one per line; "none" for a frame without a tos field.
# One awk for the whole capture: a sed per frame cost minutes in a TCG guest (an RDMA-write phase
# is thousands of frames). mawk has no strtonum, hence hex(); the last "(tos" of a line counts.
roce_capture_dscps() {
  roce_capture_frames "$1" | awk '
    function hex(s, i, v) {
      v = 0
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v
    }
    /\.4791: UDP/ {
      rest = $0; tos = ""
      while (match(rest, /\(tos 0x[0-9a-f]+/)) {
        tos = substr(rest, RSTART + 7, RLENGTH - 7); rest = substr(rest, RSTART + RLENGTH)
      }
      if (tos != "") print int(hex(tos) / 4); else print "none"
    }'
}

# roce_capture_stop: ends the capture and restores the neighbour entry.
roce_capture_stop() {
  [[ -n ${_roce_cap_pf:-} ]] || return 0
  vm_capture_stop
  ip neigh replace "$ROCE_IP_B" lladdr "$ROCE_MAC_B" dev "$_roce_slave_a" nud permanent
  ip link del roce-cap 2>/dev/null
  _roce_cap_pf=
}

_roce_cni() { # CMD NS CONF
  CNI_COMMAND=$1 CNI_NETNS=/var/run/netns/$2 CNI_CONTAINERID=$2 CNI_IFNAME=$ROCE_IF \
    CNI_PATH=/usr/lib/cni RDMANET_STATE_DIR=$_roce_work/state \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=vm;K8S_POD_NAME=$2" \
    "$_roce_cni_bin" <<<"$3" 2>>"$_roce_work/cni.log"
}

_roce_conf() { # VF_PCI ADDRESS PRIO
  printf '{"cniVersion": "1.1.0", "name": "roce", "type": "rdmanet", "mode": "sriov",
    "deviceID": "%s", "vlan": 100, "mtu": 9000, "lossless": {"priority": %s, "check": "warn"},
    "ipam": {"type": "static", "addresses": [{"address": "%s/24"}]}}' "$1" "$3" "$2"
}

# roce_pods_up CNI_BIN PRIO: VF 1 of the NUMA 0 PF into pod a, VF 1 of the NUMA 1 PF into pod b
# (the PFs wired to each other), through the CNI, then roce_link.
roce_pods_up() {
  _roce_cni_bin=$(readlink -f "$1") _roce_prio=$2
  _roce_work=$(mktemp -d /tmp/roce-pods.XXXXXX)
  ROCE_PF_A=$(pf_of_numa 0) ROCE_PF_B=$(pf_of_numa 1)
  ROCE_VF_A=$(vf_pci_of "$ROCE_PF_A" 1) ROCE_VF_B=$(vf_pci_of "$ROCE_PF_B" 1)
  local pf out
  # Jumbo frames need the PFs' MTU first; an MTU change resets an igb PF (carrier goes).
  for pf in "$ROCE_PF_A" "$ROCE_PF_B"; do ip link set "$pf" mtu 9000 || return 1; done
  for pf in "$ROCE_PF_A" "$ROCE_PF_B"; do
    wait_carrier "$pf" 60 || { _roce_err "$pf has no carrier" && return 1; }
  done
  ip netns add "$ROCE_NS_A" && ip netns add "$ROCE_NS_B" || return 1
  out=$(_roce_cni ADD "$ROCE_NS_A" "$(_roce_conf "$ROCE_VF_A" "$ROCE_POD_IP_A" "$2")") &&
    out=$(_roce_cni ADD "$ROCE_NS_B" "$(_roce_conf "$ROCE_VF_B" "$ROCE_POD_IP_B" "$2")") ||
    { _roce_err "CNI ADD: $out" && return 1; }
  wait_carrier -n "$ROCE_NS_A" "$ROCE_IF" 90 && wait_carrier -n "$ROCE_NS_B" "$ROCE_IF" 90 ||
    { _roce_err "the pods' VFs have no carrier" && return 1; }
  roce_link "$ROCE_NS_A" "$ROCE_IF" "$ROCE_NS_B" "$ROCE_IF"
}

# roce_test_begin NAME CNI_BIN PRIO: the start a VM test over the two pods shares. A work dir
# ($work, /tmp/NAME.XXXXXX), an EXIT trap that stops the test's background $server (if it set
# one), takes the pods down and removes $work, then roce_pods_up; if that fails, the test's
# failure is reported and the script exits.
roce_test_begin() {
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  server=
  trap '[[ -n $server ]] && kill "$server" 2>/dev/null; roce_pods_down; rm -rf "$work"' EXIT
  if ! roce_pods_up "$2" "$3"; then
    t_fail "setting up the pods"
    t_done
    exit
  fi
}

# roce_pods_down: roce_unlink, CNI DEL of both pods (their VFs back as before), the namespaces
# removed. The PFs keep MTU 9000 (restoring it would reset them again).
roce_pods_down() {
  roce_unlink
  [[ -n $_roce_work ]] || return 0
  local ns vf addr
  for ns in "$ROCE_NS_A" "$ROCE_NS_B"; do
    vf=$ROCE_VF_A addr=$ROCE_POD_IP_A
    [[ $ns == "$ROCE_NS_B" ]] && vf=$ROCE_VF_B addr=$ROCE_POD_IP_B
    [[ -e /var/run/netns/$ns ]] || continue
    _roce_cni DEL "$ns" "$(_roce_conf "$vf" "$addr" "$_roce_prio")" >/dev/null ||
      _roce_err "CNI DEL of $ns failed: $(tail -n 2 "$_roce_work/cni.log")"
    ip netns del "$ns"
  done
  rm -rf "$_roce_work"
  _roce_work=
}
