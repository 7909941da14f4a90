#!/usr/bin/env bash
# rdmanet in device-plugin mode under a real one-node cluster (hack/cluster): the chart installed
# by helm against the real API server, kubelet's registration and topology manager, Multus
# reading the pod-resources API, a PF's link health, and restarts of kubelet, of the daemon's pod
# and of containerd (issue 22, sections 2, 3 and 5).
# shellcheck source=tests/cluster/checks.sh
. "$(dirname "$0")/checks.sh"

cluster_up deviceplugin
check_chart_installed

# --- 3. Registration: the pool's count on the node.
mapfile -t vfs < <(pool_vfs)
((${#vfs[@]} > 0)) || fail "the simulated node has no pool VFs"
wait_until 60 "allocatable rdma/vf = ${#vfs[@]}" allocatable_is "${#vfs[@]}"
numa0=0
for v in "${vfs[@]}"; do [[ $(pci_numa "$v") == 0 ]] && numa0=$((numa0 + 1)); done
ok "kubelet registered rdma/vf: allocatable ${#vfs[@]} (${numa0} on NUMA node 0)"

# --- 3. A Guaranteed pod with an exclusive CPU and one VF, wired by Multus.
workload_pod rdma-1 "cpu: 1, rdma/vf: 1" "$rdma_net" | kc apply -f - >/dev/null
wait_pod_ready rdma-1
check_dp_pod rdma-1
check_pod_in_map rdma-1 "$(pod_env rdma-1 PCIDEVICE_RDMA_VF)"

# --- 3. single-numa-node: kubelet reads one NUMA node from the real sysfs, the daemon reports
# its VFs' nodes from the simulated one. Every NUMA-0 VF can be handed out; a NUMA-1 VF never
# reaches a single-numa-node pod: with node 0's VFs all taken, the next pod is rejected.
rest=$((numa0 - 1))
workload_pod rdma-rest "cpu: 100m, rdma/vf: $rest" | kc apply -f - >/dev/null
wait_pod_ready rdma-rest
pci_list=$(pod_env rdma-rest PCIDEVICE_RDMA_VF)
IFS=, read -ra got <<<"$pci_list"
eq "VFs of rdma-rest" "$rest" "${#got[@]}"
for v in "${got[@]}"; do eq "NUMA node of $v (rdma-rest)" 0 "$(pci_numa "$v")"; done
ok "all $numa0 NUMA-0 VFs handed out"
workload_pod rdma-numa1 "cpu: 100m, rdma/vf: 1" | kc apply -f - >/dev/null
rejected() {
  [[ $(kc -n "$ns" get pod rdma-numa1 -o 'jsonpath={.status.phase}/{.status.reason}') == \
    Failed/TopologyAffinityError ]]
}
wait_until 60 "rdma-numa1 rejected with TopologyAffinityError" rejected
ok "a pod that would need a NUMA-1 VF: TopologyAffinityError"
delete_pod rdma-numa1 rdma-rest

# --- 3. DEL gives the VF back to the host.
vf=$(pod_env rdma-1 PCIDEVICE_RDMA_VF)
[[ -z $(host_netdev_of "$vf") ]] || fail "$vf's netdev is still on the host while rdma-1 holds it"
delete_pod rdma-1
wait_until 30 "$vf's netdev back on the host" test -n "$(host_netdev_of "$vf")"
[[ -n $(host_netdev_of "$vf") ]] || fail "$vf's netdev did not come back"
wait_until 30 "rdma-1's series gone from /metrics" pod_gone_from_map rdma-1
ok "deleting the pod returned $vf to the host and removed its series"

# --- 3. A PF's link down makes its VFs Unhealthy: the node's allocatable drops, then recovers.
check_pf_link_health allocatable_is "${#vfs[@]}"

# --- 5. Restarts with a pod running.
workload_pod rdma-2 "cpu: 100m, rdma/vf: 1" "$rdma_net" | kc apply -f - >/dev/null
wait_pod_ready rdma-2
# --- Issue 29: a pod gets only what was given to it.
check_pod_cannot_take_anothers_vf rdma-2
# registration: the daemon's pid and its accepted registrations; "new" cases wait for it to
# change (a new process, or one more registration), then for kubelet to count every VF again.
registration() {
  local ok
  ok=$(metric 'rdmanet_dp_registrations_total{resource="rdma/vf",result="ok"}') || return 1
  [[ $(metric 'rdmanet_dp_registered{resource="rdma/vf"}') == 1 ]] || return 1
  echo "$(pgrep -f '^/usr/local/bin/rdmanet-device-plugin' | tr '\n' ' ')/$ok"
}
registered_again() { # BEFORE new|same
  local now
  now=$(registration) || return 1
  if [[ $2 == new ]]; then [[ $now != "$1" ]] || return 1; fi
  allocatable_is "${#vfs[@]}"
}
restart_case() { # NAME new|same COMMAND...: run COMMAND, then time until registered again.
  local name=$1 want=$2 before start
  shift 2
  before=$(registration) || fail "the daemon is not registered before $name"
  start=$(date +%s%N)
  "$@"
  wait_until 120 "registration after $name" registered_again "$before" "$want"
  note "reregistration_ms_deviceplugin_$name" $((($(date +%s%N) - start) / 1000000))
  check_pod_kept_eth1 rdma-2
  ok "$name: rdma-2 kept eth1, the daemon is registered, allocatable ${#vfs[@]}"
}
restart_case kubelet_restart new restart_kubelet
restart_case daemon_pod_deleted new delete_daemon_pod
# containerd's restart leaves the daemon's container running (its shim stays): kubelet keeps
# the registration, none is needed.
restart_case containerd_restart same restart_containerd
delete_pod rdma-2
ok "device-plugin mode under the real cluster"
