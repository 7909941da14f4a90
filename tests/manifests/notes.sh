#!/usr/bin/env bash
# NOTES.txt tells the admin how to check the rollout. `helm template` does not print NOTES and
# `helm install --dry-run` needs a cluster, so a copy of the chart renders it through `tpl`
# with the chart's own helpers and values.
source "$(dirname "$0")/lib.sh"
require_tools
make_tmp
cp -r "$chart" "$tmp/chart"
mv "$tmp/chart/templates/NOTES.txt" "$tmp/chart/notes.src"
echo '{{ dict "notes" (tpl (.Files.Get "notes.src") .) | toJson }}' >"$tmp/chart/templates/notes.yaml"

notes() {
  "$helm" template rdmanet "$tmp/chart" --namespace kube-system --show-only templates/notes.yaml "$@" |
    node -e 'const y=require("yaml");console.log(y.parse(require("fs").readFileSync(0,"utf8")).notes)'
}
expect() {
  grep -qF -- "$1" <<<"$out" || die "NOTES lack '$1':
$out"
}

out=$(notes)
expect 'kubectl -n kube-system rollout status daemonset/rdmanet'
expect 'logs daemonset/rdmanet -c device-plugin'
expect 'logs daemonset/rdmanet -c install-cni'
expect '.status.allocatable.rdma/vf'
expect 'No networks were rendered'

out=$(notes -f "$values_dir/macvlan.yaml")
expect 'kube-system/rdma-shared  mode macvlan, resource rdma/shared, lossless priority 3'
expect '(rdma/shared)'

out=$(notes --set cni.install=false --set devicePlugin.resourcePrefix=rdma.example.com)
grep -q 'install-cni' <<<"$out" && die "NOTES mention install-cni with cni.install=false"
expect '.status.allocatable.rdma\.example\.com/vf'
# api: dra: ResourceSlices and DeviceClasses instead of node allocatable.
out=$(notes -f "$values_dir/sriov-dra.yaml")
expect 'kubectl get resourceslices --field-selector spec.driver=rdma.rdmanet.io'
expect 'Claims ask for a device by class (vf.rdma.rdmanet.io)'
expect 'accepted the DRA driver rdma.rdmanet.io'
grep -q 'allocatable' <<<"$out" && die "NOTES for api: dra check node allocatable"
echo "PASS: NOTES.txt"
