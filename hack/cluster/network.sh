#!/usr/bin/env bash
# The node's pod network: the bridge rdmc0 with the node's address, and the CNI config that
# gives each pod its eth0 on it (the reference bridge, host-local and loopback plugins, copied
# into the cluster's own CNI bin dir). Multus, when installed (multus.sh), delegates to this
# config as the cluster network.
#
# No masquerading and no iptables rules: pods talk to the node and to each other on the bridge
# only, and the host's iptables (Docker's) stay untouched. There is no kube-proxy either, yet
# in-cluster clients (the DRA driver) dial the kubernetes Service, 10.96.0.1:443. Two things
# make that work and keep it on this machine:
# - the Service network is routed to the bridge: without a route of its own it followed the
#   default route off the machine;
# - an nftables table of the cluster's own (not iptables: Docker's chains stay untouched)
#   DNATs 10.96.0.1:443 to the API server, for the host's processes and for pods.
set -euo pipefail
# shellcheck source=hack/cluster/lib.sh
. "$(dirname "$0")/lib.sh"

if ! ip link show "$bridge" >/dev/null 2>&1; then
  ip link add "$bridge" type bridge
fi
ip addr replace "$pod_gw/${pod_cidr#*/}" dev "$bridge"
ip link set "$bridge" up
ip route replace "$service_cidr" dev "$bridge"
svc_ip=${service_cidr%.*}.1
nft -f - <<NFT
table ip $nft_table
delete table ip $nft_table
table ip $nft_table {
  chain output {
    type nat hook output priority -100; policy accept;
    ip daddr $svc_ip tcp dport 443 dnat to $apiserver_ip:$apiserver_port
  }
  chain prerouting {
    type nat hook prerouting priority -100; policy accept;
    ip daddr $svc_ip tcp dport 443 dnat to $apiserver_ip:$apiserver_port
  }
}
NFT

mkdir -p "$cni_bin" "$cni_conf" "$state_dir/cni/ipam"
cni=$(bin_dir cni-plugins)
for p in bridge host-local loopback; do
  # A copy, not a link: pods' hostPath mounts of the bin dir (rdmanet's installer) and the
  # cache's lifetime stay independent.
  cmp -s "$cni/$p" "$cni_bin/$p" || install -m 0755 "$cni/$p" "$cni_bin/$p"
done
cat >"$cni_conf/10-eth0.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "rdmanet-cluster",
  "plugins": [{
    "type": "bridge",
    "bridge": "$bridge",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "$state_dir/cni/ipam",
      "ranges": [[{"subnet": "$pod_cidr", "rangeStart": "${pod_cidr%.*}.10", "gateway": "$pod_gw"}]],
      "routes": [{"dst": "0.0.0.0/0"}]
    }
  }]
}
JSON
