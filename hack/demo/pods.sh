# shellcheck shell=bash disable=SC2317,SC2154 # polled helpers; plat_* come from platform_*.sh
# The demo's pods (story.sh steps 5 to 8): kubelet's GetPreferredAllocation and Allocate through
# the stand-in kubelet, then the CNI plugin's ADD with the allocated device, the way Multus runs
# it; the checks that it works; a link flap seen by kubelet; DEL and the VFs as they were.

declare -A POD_ID POD_CONF POD_ADDR
POD_NAMES=()

pod_ns() { echo "rdmanet-demo-$1"; }

# cni CMD POD CONF: runs the rdmanet binary as a runtime via Multus v4.1.4 does (Multus's own
# CNI_ARGS keys, then the runtime's: each twice); prints its stdout.
cni() {
  mkdir -p "$DEMO_WORK/cni-bin"
  ln -sf "$RDMANET_DEMO_BIN_CNI" "$DEMO_WORK/cni-bin/rdmanet"
  # The node's roots for device-info files and pod info (cni/conf/node_config.h): the demo's.
  if [[ ! -e $DEMO_WORK/cni-state/node.conf ]]; then
    mkdir -p "$DEMO_WORK/cni-state"
    printf '{"devinfoRoot": "%s", "podInfoRoot": "%s"}\n' "$DEMO_WORK/devinfo" "$DEMO_WORK" \
      >"$DEMO_WORK/cni-state/node.conf"
  fi
  local args="K8S_POD_NAMESPACE=default;K8S_POD_NAME=train-$2;K8S_POD_INFRA_CONTAINER_ID=demo-$2"
  CNI_COMMAND=$1 CNI_CONTAINERID=demo-$2 CNI_NETNS=/var/run/netns/$(pod_ns "$2") CNI_IFNAME=eth1 \
    CNI_PATH=$DEMO_WORK/cni-bin:/usr/lib/cni \
    CNI_ARGS="IgnoreUnknown=true;$args;IgnoreUnknown=1;$args" \
    RDMANET_STATE_DIR=$DEMO_WORK/cni-state RDMANET_SYSFS_ROOT=$plat_root \
    "$DEMO_WORK/cni-bin/rdmanet" <<<"$3" 2>>"$DEMO_WORK/cni.log"
}

# pf_of_vf PCI: the PF netdev of a VF (through its physfn link); vf_index_of PCI: its VF number.
pf_of_vf() { plat_netdev_of_pci "$(basename "$(readlink -f "$plat_root/sys/bus/pci/devices/$1/physfn")")"; }
vf_index_of() {
  local l
  for l in "$plat_root"/sys/bus/pci/devices/"$1"/physfn/virtfn*; do
    [[ $(basename "$(readlink -f "$l")") == "$1" ]] && echo "${l##*virtfn}" && return 0
  done
  return 1
}

# schedule_pod NAME NUMA ADDRESS: Allocate then CNI ADD for pod NAME on NUMA node NUMA.
schedule_pod() {
  local pod=$1 numa=$2 addr=$3 ns avail id alloc conf out info
  ns=$(pod_ns "$pod")
  say "pod $pod (NUMA $numa): kubelet's topology manager offers the plugin its NUMA $numa devices"
  avail=$(kubelet_last devices rdma/vf | jq -r --argjson n "$numa" \
    '[.devices[] | select(.health == "Healthy" and .numa == [$n]) | .id] | join(",")')
  if [[ -z $avail ]] || ! kubelet prefer rdma/vf 1 "$avail"; then
    record "pod-$pod" FAIL "no preferred device on NUMA $numa"
    return 1
  fi
  id=$(kubelet_last prefer rdma/vf | jq -r '.device_ids[0]')
  printf '  GetPreferredAllocation(size 1, available %s)\n    -> %s\n' "$avail" "$id"
  if ! kubelet allocate rdma/vf "$id"; then
    kubelet_last allocate rdma/vf | sed 's/^/  /'
    record "pod-$pod" FAIL "Allocate $id failed"
    return 1
  fi
  alloc=$(kubelet_last allocate rdma/vf)
  printf '  Allocate([%s]) -> devices: %s\n' "$id" \
    "$(jq -r '[.responses[0].devices[].host_path] | join(" ")' <<<"$alloc")"
  jq -r '.responses[0].envs | to_entries[] | select(.key | endswith("_INFO") | not) |
    "    env \(.key)=\(.value | @sh)"' <<<"$alloc"

  ip netns add "$ns"
  POD_NAMES+=("$pod")
  info=$DEMO_WORK/devinfo/cni/$pod-eth1.json
  conf=$(plat_netconf "$id" "$addr" "$info")
  POD_ID[$pod]=$id POD_CONF[$pod]=$conf POD_ADDR[$pod]=${addr%/*}
  if [[ $pod == a ]]; then
    say "CNI ADD as Multus runs it: deviceID from the allocation, netns from the runtime. Netconf:"
    jq -c 'del(.runtimeConfig)' <<<"$conf" | sed 's/^/  /'
    jq -c '{runtimeConfig}' <<<"$conf" | sed 's/^/  /'
    say "$(plat_netconf_note)"
  fi
  printf '$ CNI_COMMAND=ADD CNI_CONTAINERID=demo-%s CNI_NETNS=/var/run/netns/%s CNI_IFNAME=eth1 rdmanet <netconf\n' \
    "$pod" "$ns"
  if ! out=$(cni ADD "$pod" "$conf"); then
    printf '  %s\n' "$out"
    tail -n 3 "$DEMO_WORK/cni.log" | sed 's/^/  log: /'
    record "pod-$pod" FAIL "CNI ADD of $id failed"
    return 1
  fi
  printf '  %s\n' "$(jq -c . <<<"$out")"
  plat_after_add_note "$(jq -r '.responses[0].envs.NCCL_IB_HCA // "" | ltrimstr("=")' <<<"$alloc")"
  run_show -n 3 ip -n "$ns" -d link show eth1
  run_show -n 2 ip -n "$ns" -br addr show eth1
  printf '$ cat %s   (the device-info file)\n' "$info"
  jq -c . "$info" 2>&1 | sed 's/^/  /'
  # What the training container reads: Allocate's mount of the device's pod info directory.
  local mount
  mount=$(jq -c '.responses[0].mounts[0] // empty' <<<"$alloc")
  if [[ -n $mount ]]; then
    say "Allocate mounted $(jq -r .host_path <<<"$mount") at $(jq -r .container_path <<<"$mount")" \
      "(read-only); the container reads there what only the CNI knows:"
    printf '$ cat %s/rdmanet.env   (in the container)\n' "$(jq -r .container_path <<<"$mount")"
    sed 's/^/  /' "$(jq -r .host_path <<<"$mount")/rdmanet.env" 2>&1
    grep -q '^NCCL_IB_GID_INDEX=' "$(jq -r .host_path <<<"$mount")/rdmanet.env" 2>/dev/null ||
      say "no NCCL_IB_GID_INDEX: this node's RDMA device has no GID for the pod's address (a real" \
        "VF's does once eth1 has it; tests/cni/multus_chain.sh shows the line)"
  fi
  local mtu got
  mtu=$(ip -n "$ns" -j link show eth1 | jq '.[0].mtu')
  got=$(ip -n "$ns" -j addr show eth1 | jq -r '.[0].addr_info[] | select(.family == "inet") | .local')
  if [[ $mtu == 9000 && $got == "${addr%/*}" ]] &&
    [[ $(jq -r '.pci."pci-address"' "$info" 2>/dev/null) == "$id" ]] &&
    grep -qx "RDMANET_IP=${addr%/*}" "$DEMO_WORK/pod-info/$id/rdmanet.env" 2>/dev/null; then
    record "pod-$pod" PASS "$id on NUMA $numa -> eth1 $addr mtu 9000, device-info and pod info written"
  else
    record "pod-$pod" FAIL "eth1 mtu '$mtu' ip '$got', device-info $(test -f "$info" && echo ok || echo missing)"
  fi
}

show_it_works() {
  local a=rdmanet-demo-a b=rdmanet-demo-b pf_b
  if [[ -z ${POD_ID[a]:-} || -z ${POD_ID[b]:-} ]]; then
    record ping-jumbo FAIL "the pods were not both created"
    return 1
  fi
  plat_wait_pod_carrier "$a"
  plat_wait_pod_carrier "$b"
  # Jumbo: 8972 bytes of ICMP payload + 28 of headers = 9000, with "don't fragment".
  if run_show -n 4 ip netns exec "$a" ping -c 3 -W 2 -M "do" -s 8972 "${POD_ADDR[b]}"; then
    record ping-jumbo PASS "pod a -> pod b, 9000-byte packets, DF set"
  else
    record ping-jumbo FAIL "pod a cannot reach ${POD_ADDR[b]} at MTU 9000"
  fi
  pf_b=$(pf_of_vf "${POD_ID[b]}")
  plat_capture "$pf_b" "$a"
  record_platform_step pcp-capture $? "vlan 100, p 3 on $pf_b" \
    "no frame tagged vlan 100, p 3 on $pf_b"
  local pf_a idx
  pf_a=$(pf_of_vf "${POD_ID[a]}")
  idx=$(vf_index_of "${POD_ID[a]}")
  plat_vf_settings "$pf_a" "$idx"
  record_platform_step vf-settings $? "$pf_a vf $idx: vlan 100, qos 3" \
    "$pf_a vf $idx lacks vlan 100, qos 3"
}

# rdma_traffic: RDMA writes from pod a to pod b, captured on pod b's PF (the platform's part).
rdma_traffic() {
  if [[ -z ${POD_ID[a]:-} || -z ${POD_ID[b]:-} ]]; then
    record rdma-traffic FAIL "the pods were not both created"
    return 1
  fi
  plat_rdma_traffic rdmanet-demo-a rdmanet-demo-b "${POD_ADDR[b]}" "$(pf_of_vf "${POD_ID[b]}")"
  record_platform_step rdma-traffic $? "${PLAT_RDMA_DETAIL:-}" "${PLAT_RDMA_DETAIL:-}"
}

# health_flip: pod a's PF goes down and up; kubelet's ListAndWatch stream shows it.
health_flip() {
  local id=${POD_ID[a]:-} pf mark t0 t1 ev ms
  if [[ -z $id ]]; then
    record health-down FAIL "pod a has no device"
    return 1
  fi
  pf=$(pf_of_vf "$id")
  say "pod a's VF $id leaves through PF $pf; the plugin watches carrier with a netlink monitor"
  mark=$(kubelet_mark)
  t0=$(demo_now_ms)
  plat_link "$pf" down
  t1=$(demo_now_ms)
  if ev=$(kubelet_wait_event "$mark" 10 \
    ".event == \"devices\" and any(.devices[]; .id == \"$id\" and .health == \"Unhealthy\")"); then
    ms=$(($(jq '.t_ns' <<<"$ev") / 1000000 - t1))
    printf '  kubelet: ListAndWatch update: %s healthy of %s; Unhealthy: %s\n' \
      "$(jq .healthy <<<"$ev")" "$(jq .count <<<"$ev")" \
      "$(jq -r '[.devices[] | select(.health != "Healthy") | .id] | join(" ")' <<<"$ev")"
    # The driver takes its time to bring a port down (seconds for igb under TCG): count from
    # when `ip link set` returned, i.e. when the port was down.
    record health-down PASS "$id Unhealthy in the stream $((ms < 0 ? 0 : ms)) ms after $pf was down ($((t1 - t0)) ms to take it down)"
  else
    record health-down FAIL "no Unhealthy update for $id within 10 s"
  fi
  mark=$(kubelet_mark)
  t0=$(demo_now_ms)
  plat_link "$pf" up
  # Under TCG an igb port and its VFs take seconds to get carrier back.
  if ev=$(kubelet_wait_event "$mark" 90 '.event == "devices" and .healthy == .count'); then
    ms=$(($(jq '.t_ns' <<<"$ev") / 1000000 - t0))
    printf '  kubelet: ListAndWatch update: %s healthy of %s\n' "$(jq .healthy <<<"$ev")" \
      "$(jq .count <<<"$ev")"
    record health-up PASS "all $(jq .count <<<"$ev") Healthy again ${ms} ms after $pf came up"
  else
    record health-up FAIL "devices not all Healthy 90 s after $pf came up"
    kubelet_table rdma/vf | sed 's/^/  /'
  fi
}

# delete_pods SNAPSHOT: CNI DEL of each pod, then the VFs compared with SNAPSHOT.
delete_pods() {
  local before=$1 pod ok=1 after
  for pod in "${POD_NAMES[@]}"; do
    printf '$ CNI_COMMAND=DEL CNI_CONTAINERID=demo-%s ... rdmanet <netconf>\n' "$pod"
    cni DEL "$pod" "${POD_CONF[$pod]}" >/dev/null || ok=0
    ip netns del "$(pod_ns "$pod")"
    [[ -e $DEMO_WORK/devinfo/cni/$pod-eth1.json ]] && ok=0
    [[ -e $DEMO_WORK/pod-info/${POD_ID[$pod]}/rdmanet.env ]] && ok=0
  done
  POD_NAMES=()
  # A VF comes back before DEL returns, but its sysfs/netlink view may settle a moment later.
  _restored() { [[ $before == "$(plat_vf_snapshot 2>/dev/null)" ]]; }
  demo_poll 20 _restored
  after=$(plat_vf_snapshot)
  say "the VFs after DEL, as the host sees them:"
  plat_vf_show "$after" | sed 's/^/  /' | head -n 20
  if [[ $before == "$after" ]]; then
    say "identical to the snapshot taken before the pods were created"
  else
    say "differences from the snapshot taken before the pods were created:"
    diff -u <(printf '%s\n' "$before") <(printf '%s\n' "$after") | tail -n +3 | sed 's/^/  /'
  fi
  plat_after_del_note
  if ((ok)) && [[ $before == "$after" ]]; then
    record vf-restore PASS "DEL ok, device-info and pod info files removed, every VF as before"
  else
    record vf-restore FAIL "DEL failed or a VF differs (see the diff)"
  fi
}

# On any exit: pods still there are deleted (DEL is idempotent), their namespaces removed.
pods_cleanup() {
  local pod
  for pod in "${POD_NAMES[@]}"; do
    cni DEL "$pod" "${POD_CONF[$pod]}" >/dev/null 2>&1
    ip netns del "$(pod_ns "$pod")" 2>/dev/null
  done
}
