# shellcheck shell=bash
# Helpers for the rdmanet CNI guest tests (tests/vm/cni_*.sh): run the real binary like a
# runtime would, with Debian's IPAM plugins from /usr/lib/cni.
#
#   RDMANET_CNI_BIN   the plugin (default: cni/rdmanet below the working directory, which
#                     run.sh sets to the build directory)

cni_bin=${RDMANET_CNI_BIN:-$PWD/cni/rdmanet}
cni_work=$(mktemp -d /tmp/rdmanet-cni-vm.XXXXXX)
mkdir -p "$cni_work/bin"
ln -sf "$(readlink -f "$cni_bin")" "$cni_work/bin/rdmanet"
export RDMANET_STATE_DIR=$cni_work/state CNI_PATH=$cni_work/bin:/usr/lib/cni

# K8S_POD_UID of the calls when set: a pod whose DRA records (draDevicesDir) the plugin reads.
cni_pod_uid=""

# cni CMD NETNS CONTAINERID CONF_JSON: runs the plugin; prints its stdout; returns its exit code.
cni() {
  CNI_COMMAND=$1 CNI_NETNS=${2:+/var/run/netns/$2} CNI_CONTAINERID=$3 CNI_IFNAME=net1 \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=vm;K8S_POD_NAME=$3${cni_pod_uid:+;K8S_POD_UID=$cni_pod_uid}" \
    "$cni_work/bin/rdmanet" <<<"$4" 2>>"$cni_work/plugin.log"
}

# cni_ok NAME CMD NETNS CONTAINERID CONF: a check that the call succeeds; its output in $cni_out.
cni_ok() {
  local name=$1
  shift
  if cni_out=$(cni "$@"); then
    t_pass "$name"
  else
    t_fail "$name: $cni_out"
  fi
}

# static_ipam ADDRESS/LEN: the ipam section for Debian's static plugin.
static_ipam() { printf '{"type": "static", "addresses": [{"address": "%s"}]}' "$1"; }

# vf_line PF IDX: the PF's view of VF IDX (ip link show): VLAN, QoS, spoof checking, link
# state, trust, rates. Without the MAC column: igb lists a VF's MAC only once the VF driver has
# registered one through the mailbox (the first MAC change of the netdev, which DEL's restore
# of the original MAC is), so "00:00:00:00:00:00" before ADD and the original MAC after DEL
# mean the same unpinned state. Tests check the netdev's MAC separately.
vf_line() {
  ip link show dev "$1" | grep -E "^ +vf $2 " | sed -E 's/^ *//; s/link\/ether [0-9a-f:]+ brd [0-9a-f:]+,? ?//'
}

# open_vlan_filter PF VLAN: a VLAN device on PF so that its VLAN filter admits VLAN-tagged
# frames for the capture there (igb drops tags it has no filter for before tcpdump sees them).
open_vlan_filter() {
  ip link add link "$1" name "cap$2" type vlan id "$2" && ip link set "cap$2" up
}

cni_cleanup() {
  echo "--- plugin log"
  tail -n 40 "$cni_work/plugin.log" 2>/dev/null
  rm -rf "$cni_work"
}
