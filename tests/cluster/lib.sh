# shellcheck shell=bash
# Shared by the real-cluster tests (label cluster): bring the one-node cluster of hack/cluster up
# in one API mode, and the checks they make of it. Sourced, not run.
#
# The tests own the cluster's state (hack/cluster's state and run dirs): a cluster left up by an
# earlier run or by hand is taken down first, and every test takes its own down when it exits.
# shellcheck disable=SC2034

set -euo pipefail
tests_cluster_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=hack/cluster/lib.sh
. "$tests_cluster_dir/../../hack/cluster/lib.sh"
cluster=$repo/hack/cluster/cluster
ns=rdmanet-test
simnode_sys=$run_dir/simnode/sys

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }
# note KEY VALUE: a figure for the closing report, in the output and in cluster-figures.txt of
# the test's working directory.
note() { echo "figure: $1=$2" | tee -a cluster-figures.txt; }

# Functions a test adds to run on exit before the cluster goes down (stopping its own processes).
teardown_hooks=()

# LLDP leaves for the rails checks (issue 32, section 4): real senders, Debian's lldpd, each with
# system name NAME, port IDs by interface name, sending every second on IFACES (lldpd's -I list),
# in network namespace NETNS when given. stop_leaves stops them all (lldpd sends its TTL-0 frames
# as it goes) and removes their files; it is a teardown hook too.
lldpd_pids=()
lldp_dir=
start_leaf() { # NAME IFACES [NETNS]
  if [[ -z $lldp_dir ]]; then
    lldp_dir=$(mktemp -d /tmp/rdmanet-cluster-lldp.XXXXXX)
    chmod 755 "$lldp_dir" # lldpd's lldpcli drops to _lldpd and must reach the control socket
    teardown_hooks+=(stop_leaves)
  fi
  printf 'configure system hostname %s\nconfigure lldp portidsubtype ifname\nconfigure lldp tx-interval 1\n' \
    "$1" >"$lldp_dir/$1.conf"
  local in_ns=()
  [[ -z ${3:-} ]] || in_ns=(ip netns exec "$3")
  "${in_ns[@]}" lldpd -d -u "$lldp_dir/$1.sock" -O "$lldp_dir/$1.conf" -I "$2" \
    >"$lldp_dir/$1.log" 2>&1 &
  lldpd_pids+=("$!")
}
stop_leaves() {
  if ((${#lldpd_pids[@]})); then
    kill "${lldpd_pids[@]}" 2>/dev/null || true
    wait "${lldpd_pids[@]}" 2>/dev/null || true
  fi
  lldpd_pids=()
  [[ -z $lldp_dir ]] || rm -rf "$lldp_dir"
  lldp_dir=
}
# On any exit: the test's hooks, what the cluster logged when a check failed, then down; the
# exit code stays the test's.
cluster_teardown() {
  local rc=$? h
  for h in "${teardown_hooks[@]}"; do "$h" || true; done
  if ((rc != 0)); then
    echo "--- cluster state at failure (rc=$rc)" >&2
    kc get pods -A -o wide >&2 2>/dev/null || true
    kc get events -A --sort-by=.lastTimestamp >&2 2>/dev/null | tail -n 30 || true
    for l in kubelet containerd; do
      echo "--- tail of $l.log" >&2
      tail -n 40 "$logs/$l.log" >&2 2>/dev/null || true
    done
    echo "--- rdmanet daemon" >&2
    kc -n rdmanet logs ds/rdmanet --tail 40 >&2 2>/dev/null || true
  fi
  # RDMANET_CLUSTER_KEEP=1 leaves a failed test's cluster up, to look at by hand (`cluster down`
  # after).
  if ((rc != 0)) && [[ ${RDMANET_CLUSTER_KEEP:-} == 1 ]]; then
    echo "RDMANET_CLUSTER_KEEP=1: the cluster stays up" >&2
  else
    "$cluster" down >/dev/null 2>&1 || echo "cluster down failed" >&2
  fi
  exit "$rc"
}

# cluster_up API: down (whatever an earlier run left), then up in API mode; reports the time.
cluster_up() {
  local start
  "$cluster" down >/dev/null 2>&1 || true
  trap cluster_teardown EXIT
  start=$SECONDS
  "$cluster" up --api "$1" >"cluster-up-$1.log" 2>&1 || {
    cat "cluster-up-$1.log" >&2
    fail "cluster up --api $1"
  }
  note "up_seconds_$1" $((SECONDS - start))
  kc create namespace "$ns" >/dev/null
  # The namespace's default ServiceAccount comes from the controller-manager, asynchronously:
  # a pod created before it exists is refused.
  wait_until 60 "default ServiceAccount in $ns" kc -n "$ns" get serviceaccount default
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.5 s; fails naming WHAT.
wait_until() {
  local secs=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what: not within ${secs}s"
    sleep 0.5
  done
}

# eq WHAT WANT GOT
eq() { [[ $2 == "$3" ]] || fail "$1: want '$2', got '$3'"; }

allocatable() { kc get node "$node_name" -o "jsonpath={.status.allocatable.rdma/vf}"; }
allocatable_is() { [[ $(allocatable) == "$1" ]]; }

pod_phase() { kc -n "$ns" get pod "$1" -o 'jsonpath={.status.phase}'; }
pod_ready() {
  [[ $(kc -n "$ns" get pod "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}
wait_pod_ready() { wait_until "${2:-120}" "pod $1 Ready" pod_ready "$1"; }
pod_exec() {
  local pod=$1
  shift
  kc -n "$ns" exec "$pod" -- "$@"
}
# pod_env POD NAME: the container's environment variable NAME; fails when it is unset. (The
# image's busybox has no printenv applet.)
pod_env() { pod_exec "$1" sh -c "printf '%s' \"\${$2?}\""; }
delete_pod() { kc -n "$ns" delete pod "$@" --wait --timeout 120s >/dev/null; }

# The simulated node's facts, read from its sysfs tree (hack/simnode).
pci_numa() { cat "$simnode_sys/bus/pci/devices/$1/numa_node"; }
# pci_root PCI: the PCIe root (pciDDDD:BB) a function sits under, by its canonical sysfs path.
pci_root() {
  local p
  p=$(readlink -f "$simnode_sys/bus/pci/devices/$1")
  p=${p#"$simnode_sys"/devices/}
  echo "${p%%/*}"
}
# The pool's VFs (the chart's pool selects the ConnectX-class VFs): PCI address per line.
pool_vfs() {
  local d
  for d in "$simnode_sys"/bus/pci/devices/*; do
    [[ -e $d/physfn && $(cat "$d/vendor") == 0x15b3 ]] && basename "$d"
  done
  true
}
# The host netdev of a PCI function, if it is in the host's netns (absent once in a pod). The
# simulated tree names it whatever netns the real veth behind it is in.
host_netdev_of() {
  local name
  name=$(ls "$simnode_sys/bus/pci/devices/$1/net" 2>/dev/null) || return 0
  if [[ -n $name ]] && ip link show dev "$name" >/dev/null 2>&1; then echo "$name"; fi
  true
}

# The daemon's /metrics (hostNetwork, the chart's metricsPort).
metrics() { curl -fsS --max-time 5 "http://$node_ip:9109/metrics"; }
metric() { metrics | awk -v m="$1" '$1 == m {print $2}'; }
# crictl against the cluster's containerd.
crictl() { "$(bin_dir cri-tools)/crictl" --runtime-endpoint "unix://$containerd_sock" "$@"; }

# The rdmanet network of the chart's values (hack/cluster/rdmanet.sh), as eth1.
rdma_net="k8s.v1.cni.cncf.io/networks: rdmanet/rdma-vf@eth1"

# workload_pod NAME LIMITS [ANNOTATIONS] [CLAIM_TEMPLATE]: a Guaranteed pod (requests = limits)
# of the workload image that sleeps. LIMITS: the container's extra limits, e.g. "cpu: 1,
# rdma/vf: 1"; ANNOTATIONS: a flow map's entries; CLAIM_TEMPLATE: a ResourceClaimTemplate whose
# claim the container uses. RESTART_POLICY (default Never) is the pod's restartPolicy.
workload_pod() {
  local claims=
  [[ -z ${4:-} ]] || claims="claims: [{name: devs}]"
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $ns
  annotations: {${3:-}}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: ${RESTART_POLICY:-Never}
  ${4:+resourceClaims: [{name: devs, resourceClaimTemplateName: $4\}]}
  containers:
    - name: main
      image: $workload_image
      imagePullPolicy: Never
      command: [/usr/local/busybox/sleep, "36000"]
      resources:
        limits: {memory: 64Mi, $2}
        $claims
YAML
}

# claim_pod_yaml NAME REQUESTS [CONSTRAINTS] [ANNOTATIONS]: a ResourceClaimTemplate NAME
# (REQUESTS and CONSTRAINTS: flow sequences of spec.devices) and a pod NAME of the workload image
# whose container uses the claim made from it (ANNOTATIONS: the pod's, a flow map's entries).
claim_pod_yaml() {
  cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $1, namespace: $ns}
spec:
  spec:
    devices:
      requests: $2
      ${3:+constraints: $3}
---
YAML
  workload_pod "$1" "cpu: 100m" "${4:-}" "$1"
}
