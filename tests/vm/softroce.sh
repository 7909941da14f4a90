#!/usr/bin/env bash
# vm test (run inside the guest by hack/vm/run.sh): Soft-RoCE on an SR-IOV VF, as the device
# plugin and the CNI will see it. rxe0 on a VF is a virtual device whose `parent` names the VF,
# with a RoCE v2 GID for the VF's IPv4 address and a uverbs char device; verbs work (ibv_devinfo,
# an RC ping-pong over the device); it cannot change netns, and in the default shared RDMA netns
# mode it disappears when its netdev moves to another netns.
set -u
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"

pf0=$(pf_of_numa 0)
mapfile -t vfs < <(vfs_of "$pf0")
vf=${vfs[3]:-}
if [[ -z $vf ]]; then
  t_fail "no VF 3 on the NUMA 0 PF '$pf0'"
  t_done
  exit
fi
echo "rxe0 on VF $vf ($(pci_of_netdev "$vf")) of $pf0"
ip addr add 192.168.50.1/24 dev "$vf"
ip link set "$vf" up

t_run "rdma link add rxe0 on $vf" rdma link add rxe0 type rxe netdev "$vf"
ib=/sys/class/infiniband/rxe0
t_run "$ib exists" test -d "$ib"
t_eq "rxe0 parent" "$(cat "$ib/parent" 2>/dev/null)" "$vf"
t_match "rxe0 is a virtual device" '/devices/virtual/infiniband/rxe0$' "$(readlink -f "$ib")"
t_run "rxe0 has no device link" test ! -e "$ib/device"
t_eq "rxe0 port 1 link_layer" "$(cat "$ib/ports/1/link_layer" 2>/dev/null)" Ethernet
t_eq "rxe0 ndev of GID 0" "$(cat "$ib/ports/1/gid_attrs/ndevs/0" 2>/dev/null)" "$vf"

# The IPv4 address shows up as an IPv4-mapped RoCE v2 GID (added asynchronously).
_rocev2_gid_index() {
  local g
  for g in "$ib"/ports/1/gids/*; do
    if [[ $(<"$g") == 0000:0000:0000:0000:0000:ffff:c0a8:3201 &&
      $(<"$ib/ports/1/gid_attrs/types/${g##*/}") == "RoCE v2" ]]; then
      echo "${g##*/}"
      return 0
    fi
  done 2>/dev/null
  return 1
}
t_run "RoCE v2 GID for 192.168.50.1" vm_poll 20 _rocev2_gid_index
gid=$(_rocev2_gid_index)

uverbs=
for u in /sys/class/infiniband_verbs/uverbs*; do
  [[ $(cat "$u/ibdev" 2>/dev/null) == rxe0 ]] && uverbs=${u##*/}
done
t_run "uverbs device of rxe0 ($uverbs)" test -n "$uverbs" -a -c "/dev/infiniband/$uverbs"

info=$(ibv_devinfo -d rxe0 2>&1)
t_match "ibv_devinfo -d rxe0" 'hca_id:[[:space:]]+rxe0' "$info"
t_match "ibv_devinfo shows an Ethernet port" 'link_layer:[[:space:]]+Ethernet' "$info"

# Verbs datapath: an RC ping-pong over rxe0 to its own GID (the server listens for the TCP
# exchange of QP numbers; the client retries its connect until the server is up).
if [[ -n $gid ]]; then
  timeout 60 ibv_rc_pingpong -d rxe0 -g "$gid" -n 20 >/tmp/pp-server.log 2>&1 &
  server=$!
  vm_poll 30 timeout 20 ibv_rc_pingpong -d rxe0 -g "$gid" -n 20 127.0.0.1 >/tmp/pp-client.log 2>&1
  t_match "ibv_rc_pingpong over rxe0" 'bytes in .* seconds' "$(cat /tmp/pp-client.log)"
  wait "$server"
  t_eq "ibv_rc_pingpong server exit code" "$?" 0
fi

# netns behaviour in the default shared mode.
t_match "RDMA netns mode is shared" 'netns shared' "$(rdma system show 2>&1)"
ip netns add other
t_refused "rxe0 cannot move to a netns" rdma dev set rxe0 netns other
ip link set "$vf" netns other
t_run "rxe0 vanishes when $vf moves to a netns" vm_poll 10 test ! -e "$ib"

t_done
