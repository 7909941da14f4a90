#!/usr/bin/env bash
# vm test: the daemon as a DRA driver (--api dra) on a real kernel, against the stand-in API
# server (tests/fakes/apiserver, Node.js from the host's root, seen over 9p; it validates every
# ResourceSlice against resource.k8s.io/v1) and the stand-in DRA kubelet (the upstream dra/v1
# protos). The default topology puts each igb PF behind its own pxb-pcie expander, so the
# published slices must carry exactly two `resource.kubernetes.io/pcieRoot` values, each the
# root complex the guest's /sys shows for that VF (computed here from `readlink -f`, not from
# rdmanet's code), with the PF's numaNode. Then a claim allocating one VF with a Soft-RoCE
# device is prepared as kubelet would: its CDI spec names exactly that rxe's uverbs node and
# rdma_cm, the request's env device names it in NCCL_IB_HCA, and unprepare leaves no CDI file.
#
#   dra.sh DEVICE_PLUGIN FAKE_DRA_KUBELET
set -u
# shellcheck source=tests/vm/dp_lib.sh
source "$(dirname "$0")/dp_lib.sh" dra "$@"
apiserver=$(readlink -f "$RDMANET_VM_DIR/../../tests/fakes/apiserver/apiserver.mjs")
driver=rdma.rdmanet.io node_name=vm-node
dra_kubelet() { "$kubelet_bin" --kubelet-dir "$DEMO_WORK/kubelet" --timeout-ms 60000 "$@"; }

api_pid=
_dra_finish() {
  _dp_finish
  [[ -n $api_pid ]] && kill "$api_pid" 2>/dev/null && wait "$api_pid"
  [[ -s $DEMO_WORK/api.err ]] && { echo "--- API server stderr"; tail -n 15 "$DEMO_WORK/api.err"; }
}
trap _dra_finish EXIT

# The stand-in API server runs on the host's Node.js and kubernetes-models, through 9p.
t_run "Node.js runs in the guest" node --version
node "$apiserver" >"$DEMO_WORK/api.out" 2>"$DEMO_WORK/api.err" &
api_pid=$!
if ! vm_poll 60 grep -q '"port"' "$DEMO_WORK/api.out"; then
  t_fail "the stand-in API server did not start: $(cat "$DEMO_WORK/api.err")"
  t_done
  exit
fi
url=http://127.0.0.1:$(grep -o '"port":[0-9]*' "$DEMO_WORK/api.out" | cut -d: -f2)
api() { curl -sS --fail-with-body -H 'Content-Type: application/json' "$@"; }
api -X POST "$url/api/v1/nodes" \
  -d "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$node_name\"}}" >/dev/null
step "stand-in API server at $url"

# Every VF up with carrier (prepare refuses unhealthy devices), an rxe on the first VF of each
# PF: the claim takes NUMA 1's (made second, so not uverbs0), and its CDI spec must not name
# NUMA 0's.
dp_vfs_up
claimed=$(vfs_of "$(pf_of_numa 1)" | head -n1) other=$(vfs_of "$(pf_of_numa 0)" | head -n1)
t_run "rdma link add rxd0 on $other" rdma link add rxd0 type rxe netdev "$other"
t_run "rdma link add rxd1 on $claimed" rdma link add rxd1 type rxe netdev "$claimed"
claimed_id=$(pci_of_netdev "$claimed")

cat >"$DEMO_WORK/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: vm
clusters: [{name: vm, cluster: {server: '$url'}}]
contexts: [{name: vm, context: {cluster: vm, user: vm}}]
users: [{name: vm, user: {token: vm}}]
YAML
printf '%s\n' '{"resourceList": [{"resourceName": "vf", "selectors": [{"drivers": ["igbvf"]}]}]}' \
  >"$DEMO_WORK/pools.json"
"$dp_bin" --api dra --node-name "$node_name" --kubeconfig "$DEMO_WORK/kubeconfig" \
  --config "$DEMO_WORK/pools.json" --kubelet-dir "$DEMO_WORK/kubelet" --cdi-dir "$DEMO_WORK/cdi" \
  --sysfs-root / --metrics-addr off --doctor-interval 0 --log-level debug \
  >"$DEMO_WORK/dp.log" 2>&1 &
dp_pid=$!
t_eq "the stand-in DRA kubelet registers the driver" \
  "$(dra_kubelet register | jq -r .plugin)" "$driver"

# The node's slices, once they hold all 8 VFs: "pciBusID pcieRoot numaNode name" per device.
slices=$DEMO_WORK/slices.json
slice_devices() {
  api -G "$url/apis/resource.k8s.io/v1/resourceslices" \
    --data-urlencode "fieldSelector=spec.nodeName=$node_name" >"$slices" &&
    (($(jq '[.items[].spec.devices[]] | length' "$slices") == ${#vf_pf[@]}))
}
t_run "the driver publishes the ${#vf_pf[@]} VFs" vm_poll 60 slice_devices
published=$(jq -r '.items[].spec.devices[] | .attributes as $a |
  [$a["resource.kubernetes.io/pciBusID"].string, $a["resource.kubernetes.io/pcieRoot"].string,
   ($a["resource.kubernetes.io/numaNode"].int | tostring), .name] | join(" ")' "$slices" | sort)
printf '%s\n' "$published"
t_eq "exactly two distinct pcieRoot values" "$(cut -d' ' -f2 <<<"$published" | sort -u | wc -l)" 2
declare -A dev_name
while read -r id root numa name; do
  # The root complex as the guest's /sys shows it: /sys/devices/pci<domain>:<bus>/...
  sys=$(readlink -f "/sys/bus/pci/devices/$id")
  want_root=${sys#/sys/devices/}
  want_root=${want_root%%/*}
  t_eq "$id (PF ${vf_pf[$id]:-none}): pcieRoot is its root complex $sys" "$root" "$want_root"
  t_eq "$id: numaNode" "$numa" "${vf_numa[$id]:-none}"
  dev_name[$id]=$name
done <<<"$published"
t_eq "the two roots are the two PFs'" \
  "$(for n in 0 1; do readlink -f "/sys/bus/pci/devices/$(pf_pci_of_numa "$n")"; done |
    sed 's|^/sys/devices/||; s|/.*||' | sort -u | xargs)" \
  "$(cut -d' ' -f2 <<<"$published" | sort -u | xargs)"

# A claim allocating the VF with rxd1, as the scheduler would write it.
claim=$(api -X POST "$url/apis/resource.k8s.io/v1/namespaces/vm/resourceclaims" -d "$(jq -nc \
  --arg dev "${dev_name[$claimed_id]:-}" --arg drv "$driver" --arg pool "$node_name" '{
  apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
  metadata: {name: "nic", namespace: "vm"},
  spec: {devices: {requests: [{name: "nic", exactly: {deviceClassName: "rdma-vf", count: 1}}]}},
  status: {allocation: {devices: {results: [
    {request: "nic", driver: $drv, pool: $pool, device: $dev}]}}}}')")
uid=$(jq -r .metadata.uid <<<"$claim")
step "claim vm/nic ($uid) allocates ${dev_name[$claimed_id]:-?} = $claimed_id ($claimed, rxd1)"
if prep=$(dra_kubelet prepare vm "$uid" nic); then
  t_eq "prepare: one device, the claimed one, for request nic" \
    "$(jq -r --arg u "$uid" '.claims[$u].devices | map([.device_name, .pool_name,
      (.request_names | join(","))] | join(" ")) | join(";")' <<<"$prep")" \
    "${dev_name[$claimed_id]:-} $node_name nic"
else
  t_fail "prepare: $prep"
fi
spec=$DEMO_WORK/cdi/rdmanet.io-rdma_$uid.json
uverbs=/dev/infiniband/$(basename "$(dirname "$(grep -lx rxd1 /sys/class/infiniband_verbs/*/ibdev)")")
t_run "rxd1's uverbs node $uverbs exists" test -c "$uverbs"
t_eq "the CDI spec names exactly rxd1's uverbs and rdma_cm" \
  "$(jq -r '[.devices[].containerEdits.deviceNodes[].hostPath] | sort | join(" ")' "$spec")" \
  "$(printf '%s\n' "$uverbs" /dev/infiniband/rdma_cm | sort | xargs)"
# The device names two CDI devices of the spec: its own (the nodes) and its request's (the env
# over all of the request's devices); and, as the request's first device, the CDI device of the
# request's device metadata (KEP-5304), from a spec of its own.
meta_spec=$DEMO_WORK/cdi/${driver}_metadata_${uid}_nic.json
t_eq "the claim's device names its own CDI device, its request's and its device metadata's" \
  "$(jq -r --arg u "$uid" '.claims[$u].devices[0].cdi_device_ids | join(" ")' <<<"$prep")" \
  "$(jq -r '.kind as $k | [.devices[] | $k + "=" + .name] | join(" ")' "$spec" "$meta_spec" |
    xargs)"
# The metadata file that spec mounts: a stream whose first object names rxd1's PCI address.
meta_file=$DEMO_WORK/kubelet/plugins/$driver/dra-device-metadata/$uid/nic/metadata.json
t_eq "the device metadata names the claimed VF's PCI address" \
  "$(jq -rs '.[0].requests[0].devices[0].attributes["resource.kubernetes.io/pciBusID"].string' \
    "$meta_file")" "$claimed_id"
t_eq "the metadata spec mounts that file" \
  "$(jq -r '.devices[0].containerEdits.mounts[0].hostPath' "$meta_spec")" "$meta_file"
t_match "the request's env names rxd1 for NCCL" '^NCCL_IB_HCA=.*rxd1' \
  "$(jq -r --arg u "$uid" '.devices[] | select(.name == $u + "_nic") | .containerEdits.env[]' \
    "$spec")"

t_run "unprepare" dra_kubelet unprepare vm "$uid" nic
t_eq "no CDI file left" "$(find "$DEMO_WORK/cdi" -type f | wc -l)" 0
t_run "no device metadata left" test ! -e "$(dirname "$(dirname "$meta_file")")"
step "done"
t_done
