# shellcheck shell=bash disable=SC2034 # plat_root, PLAT_NA: read by story.sh and pods.sh
# The demo's node inside the real-kernel VM (hack/vm, default topology): Debian's kernel, two
# emulated Intel 82576 (igb) SR-IOV NICs, one per NUMA node, wired to each other, 4 VFs each.
# The guest has no RDMA NIC and no GPU: Soft-RoCE (rxe) on each VF stands in for the VF's RDMA
# function, and the GPU matrix comes from the simulated node's tree (clearly labelled).
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"

plat_root=/

plat_describe() {
  echo "Debian's kernel $(uname -r) under QEMU: two igb (82576) SR-IOV NICs on NUMA 0 and 1,"
  echo "   wired to each other, 4 VFs each; Soft-RoCE (rxe) on each VF stands in for its HCA"
}

# The node as an operator leaves it before pods arrive: jumbo PFs, VFs up, an RDMA device per VF.
plat_up() {
  local pf v i=0
  PLAT_PFS=("$(pf_of_numa 0)" "$(pf_of_numa 1)")
  for pf in "${PLAT_PFS[@]}"; do ip link set "$pf" mtu 9000 || return 1; done
  # An MTU change resets the igb PF (carrier gone for a second or two); VFs follow it.
  for pf in "${PLAT_PFS[@]}"; do wait_carrier "$pf" 60 || return 1; done
  for pf in "${PLAT_PFS[@]}"; do
    for v in $(vfs_of "$pf"); do ip link set "$v" up || return 1; done
  done
  for pf in "${PLAT_PFS[@]}"; do
    for v in $(vfs_of "$pf"); do wait_carrier "$v" 90 || return 1; done
  done
  # Soft-RoCE: the PF's (the port's HCA, which the doctor checks) and one per VF.
  for pf in "${PLAT_PFS[@]}"; do
    rdma link add "rxe$i" type rxe netdev "$pf" || return 1
    i=$((i + 1))
  done
  for pf in "${PLAT_PFS[@]}"; do
    for v in $(vfs_of "$pf"); do
      rdma link add "rxe$i" type rxe netdev "$v" || return 1
      i=$((i + 1))
    done
  done
  local a
  for a in $(vm_sriov_pfs); do
    pf=$(netdev_of_pci "$a")
    say "PF $pf ($a, NUMA $(<"/sys/bus/pci/devices/$a/numa_node"), driver igb):" \
      "VFs $(vfs_of "$pf" | xargs)"
  done
  run_show -n 10 rdma link show
}

plat_down() { :; }
# --keep: with a terminal (hack/vm/run.sh --interactive), a root shell on the VM's console while
# the device plugin and the stand-in kubelet still run; the VM powers off when it exits.
plat_keep_note() {
  if [[ ${RDMANET_VM_INTERACTIVE:-0} != 1 || ! -c /dev/ttyS0 ]]; then
    echo "no terminal to hand over (run hack/demo.sh --keep from one): the VM powers off"
    return
  fi
  echo "a root shell in the VM; exit (or Ctrl-D) powers it off, Ctrl-A x kills QEMU."
  echo "   Files: $DEMO_WORK (dp.log, kubelet.events, pools.json), rdma link, ip -d link"
}
plat_keep() {
  [[ ${RDMANET_VM_INTERACTIVE:-0} == 1 && -c /dev/ttyS0 ]] || return 0
  stty -F /dev/ttyS0 sane 2>/dev/null
  (cd "$DEMO_WORK" && PS1='rdmanet-vm# ' setsid --ctty --wait bash --norc -i \
    </dev/ttyS0 >/dev/ttyS0 2>&1)
}

plat_pf_of_numa() { pf_of_numa "$1"; }
plat_netdev_of_pci() { netdev_of_pci "$1"; }

plat_pools_json() { demo_pools_json '{"drivers": ["igbvf"]}'; }

# plat_netconf DEVICE_ID ADDRESS DEVINFO_FILE: the pod network's netconf, as Multus passes it.
plat_netconf() {
  jq -n --arg dev "$1" --arg ip "$2" --arg info "$3" --arg pi "$DEMO_WORK/pod-info" '{
    cniVersion: "1.1.0", name: "rdma-net", type: "rdmanet", mode: "sriov",
    deviceID: $dev, vlan: 100, mtu: 9000, lossless: {priority: 3, check: "warn"},
    podInfoDir: $pi, ipam: {type: "static", addresses: [{address: $ip}]},
    capabilities: {deviceID: true, CNIDeviceInfoFile: true}, pciBusID: $dev,
    runtimeConfig: {deviceID: $dev, CNIDeviceInfoFile: $info}}'
}
plat_netconf_note() {
  echo "lossless check \"warn\": igb has no DCB, so PFC on priority 3 cannot be verified here"
}

plat_link() { run_show -n 2 ip link set "$1" "$2"; }

# A VF's carrier comes seconds after it is set up in the pod (TCG).
plat_wait_pod_carrier() { wait_carrier -n "$1" eth1 60; }

# plat_capture PEER_PF POD: what pod POD sends, seen on the wire by the peer port. QEMU's igb
# shows the full VLAN TCI on a PF captured without promiscuous mode (hack/vm/README.md). A PF
# only receives frames for its own MAC (and broadcasts, but it drops short tagged ones such as
# ARP): so the pod sends jumbo pings to an address whose neighbour entry is the peer PF's MAC.
plat_capture() {
  local cap=$DEMO_WORK/capture.txt
  vm_capture_start "$1" "$cap" vlan || return 1
  ip -n "$2" neigh replace 10.56.0.250 lladdr "$(mac_of "$1")" dev eth1 nud permanent
  ip netns exec "$2" ping -c 2 -W 1 -M "do" -s 8972 10.56.0.250 >/dev/null 2>&1
  ip -n "$2" neigh del 10.56.0.250 dev eth1
  vm_capture_stop
  say "pod a pings 10.56.0.250, whose neighbour entry is $1's MAC, so $1 receives the frames:"
  printf '$ tcpdump -p -e -n -i %s vlan
' "$1"
  grep -m 2 'vlan 100' "$cap" | cut -c 17-175 | sed 's/^/  /'
  grep -q 'vlan 100, p 3' "$cap"
}

# _bw_run NS_A NS_B POD_IP_B ITERATIONS: one ib_write_bw from pod a to pod b (server in pod b,
# roce_perftest), 64 KiB writes; its client output in $out, its exit code returned. -u 17: a
# 0.5 s QP timeout (perftest's 67 ms default is short for Soft-RoCE on a loaded TCG).
_bw_run() {
  local rc=0
  ${_bw_cap:+roce_capture_start "$_bw_cap" "$_bw_pf"}
  roce_perftest "$1" "$2" "$3" "$DEMO_WORK/bw.txt" ib_write_bw -s 65536 -n "$4" -u 17 \
    --report_gbits 2>&1 || rc=1
  out=$(cat "$DEMO_WORK/bw.txt")
  roce_capture_stop
  return "$rc"
}

# _bw_said SIDE: ib_write_bw's output on stdin without its banner (`Key : value` lines, the
# test's name) and its table, prefixed: what is left are its errors and warnings.
_bw_said() {
  grep -vE '^ *(#bytes|[0-9]+ +[0-9]+ |remote address|local address|GID:|-{10,}|\*{10,}|$)' |
    grep -vE ' : |^ *RDMA_Write BW Test' | head -n 8 | sed "s/^/  ($1) /"
}

# plat_rdma_traffic NS_A NS_B POD_IP_B PEER_PF: ib_write_bw from pod a to pod b over Soft-RoCE in
# the VM harness's arrangement (hack/vm/roce_pods.sh: an ipvlan slave of each pod's VF in the
# initial netns carries the rxe, since rxe cannot send for a pod's netns on this kernel), then a
# second, shorter run under a capture on pod b's PF. The figure comes from the first run: the
# capture's broadcast-neighbour trick floods every function of both ports with the frames, which
# can stall a transfer on a loaded TCG; the second run shows the tags. Sets PLAT_RDMA_DETAIL.
plat_rdma_traffic() {
  # shellcheck source=hack/vm/roce_pods.sh
  source "$RDMANET_VM_DIR/roce_pods.sh"
  local cap=$DEMO_WORK/roce-capture.txt out bw total tagged ok=1
  PLAT_RDMA_DETAIL="Soft-RoCE over the pods' VFs could not be set up"
  roce_link "$1" eth1 "$2" eth1 || { roce_unlink && return 1; }
  say "Soft-RoCE $ROCE_DEV_A on an ipvlan slave of pod a's VF, $ROCE_DEV_B on pod b's: frames"
  say "leave through the VFs, so the VF's vlan 100 qos 3 applies (REFERENCE.md, hack/vm/roce_pods.sh)"
  printf '$ ip netns exec %s ib_write_bw -d %s -x %s -s 65536 -n 200 -u 17 --report_gbits %s\n' \
    "$1" "$ROCE_DEV_A" "$ROCE_GID_A" "$3"
  _bw_cap='' _bw_run "$1" "$2" "$3" 200 || ok=0
  grep -E '^ *#bytes|^ *65536' <<<"$out" | sed 's/^ */  /'
  # On a failure, what each side said besides its table: perftest's errors go to stderr,
  # unbuffered, so they come before the buffered table lines and a tail would miss them.
  ((ok)) || { _bw_said client <<<"$out" && _bw_said server <"$DEMO_WORK/bw.txt.server"; }
  bw=$(awk '$1 == 65536 && $2 == 200 { print $4 }' <<<"$out")
  say "again (50 writes) under a capture on $4, the sender's neighbour entry for pod b broadcast:"
  _bw_cap=$cap _bw_pf=$4 _bw_run "$1" "$2" "$3" 50 ||
    say "(that run did not finish: the broadcast copies stall Soft-RoCE on a loaded TCG)"
  total=$(grep -c '\.4791: UDP' "$cap")
  tagged=$(grep -c 'vlan 100, p 3, .*\.4791: UDP' "$cap")
  printf '$ tcpdump -p -e -n -i %s udp port 4791   (%s frames)\n' "$4" "$total"
  grep -m 2 '4791: UDP' "$cap" | cut -c 17-200 | sed 's/^/  /'
  roce_unlink
  PLAT_RDMA_DETAIL="ib_write_bw ${bw:-?} Gbit/s (TCG); $tagged of $total RoCE v2 frames on $4 tagged vlan 100, p 3"
  ((ok)) && [[ -n $bw ]] && ((total > 0 && tagged == total))
}

# plat_vf_settings PF VF_INDEX: the PF's view of the VF (ip -d link show PF).
plat_vf_settings() {
  printf '$ ip -d link show %s   (VF lines)\n' "$1"
  ip -d link show "$1" | grep -E '^ +vf ' | sed 's/^ */  /'
  ip link show "$1" | grep -E "^ +vf $2 " | grep -q 'vlan 100, qos 3'
}

# plat_vf_show SNAPSHOT: the snapshot, one VF per line.
plat_vf_show() {
  local l
  while IFS= read -r l; do
    if [[ $l == '{'* ]]; then
      jq -r '"\(.pf) vf \(.vf): mac \(.address) vlan \(.vlan_list[0].vlan // 0) qos \(.vlan_list[0].qos // 0) spoofchk \(.spoofchk) trust \(.trust) max_tx \(.rate.max_tx) link_state \(.link_state)"' <<<"$l"
    else
      echo "$l"
    fi
  done <<<"$1"
}

# plat_after_add_note RDMA_DEV: what became of the VF's Soft-RoCE device in the pod.
plat_after_add_note() {
  [[ -n $1 && ! -e /sys/class/infiniband/$1 ]] || return 0
  say "$1 (Soft-RoCE) went away when its VF moved into the pod: rxe cannot follow its netdev into"
  say "a netns. A real VF's RDMA function (mlx5) stays, or moves with it in exclusive RDMA mode."
}

plat_after_del_note() {
  say "the pods' VFs are back, but not their Soft-RoCE devices: the kernel deleted them when the"
  say "netdevs left (rdma link show: $(rdma link show | wc -l) of 10 left); an mlx5 VF keeps its own"
}

# plat_vf_snapshot: the PFs' VF tables and the VF netdev names; DEL must restore them.
plat_vf_snapshot() {
  local pf
  for pf in "${PLAT_PFS[@]}"; do
    ip -j link show dev "$pf" | jq -c --arg pf "$pf" '.[0].vfinfo_list[] | {pf: $pf} + .'
    echo "$pf VF netdevs: $(vfs_of "$pf" | xargs)"
  done
}
