#!/usr/bin/env bash
# vm test: the network per pod, with real traffic and a real Prometheus (issue 24). Three pods
# get a VF each of the NUMA 0 PF through the real rdmanet CNI (sriov mode, VLAN 100, priority 3):
# trainer-a, trainer-b and idle. Each VF gets an L2 ipvlan slave moved to the initial netns that
# carries the pod's Soft-RoCE device (hack/vm/roce_pods.sh says why); the daemon finds it as the
# pod's by the slave's iflink (deviceplugin/podnet/pod_devices.h). Two VFs of the NUMA 1 PF (wired
# to the first) stay on the host as the peers, each with an rxe: trainer-a writes to one, trainer-b
# to the other (ib_write_bw), so the two flows share no endpoint; idle sends nothing.
#
#   1. traffic: both trainers' packet counters rise on the daemon's /metrics under their own pod
#      labels, idle's stay flat;
#   2. loss: netem drops 5% of what leaves trainer-a's VF (its side of the wire). trainer-a's
#      retransmits and sequence errors rise, trainer-b's loss counters do not, and
#      `rdmanet-doctor pods` puts trainer-a first (a WARN: igb has no PFC counters);
#   3. Prometheus (Debian's, in the guest) scrapes the daemon all along; `rate by pod` through its
#      HTTP API answers with trainer-a on top.
#
#   pod_counters.sh CNI_BIN DEVICE_PLUGIN DOCTOR
set -u
cni_bin=$(readlink -f "${1:?usage: pod_counters.sh CNI_BIN DEVICE_PLUGIN DOCTOR}")
dp_bin=$(readlink -f "${2:?device plugin binary}")
doctor_bin=$(readlink -f "${3:?doctor binary}")
# shellcheck source=hack/vm/lib.sh
source "$RDMANET_VM_DIR/lib.sh"
# shellcheck source=hack/vm/roce_pods.sh
source "$RDMANET_VM_DIR/roce_pods.sh" # roce_gid_index
SECONDS=0
step() { echo "[${SECONDS}s] $*"; }
work=$(mktemp -d /tmp/pod-counters.XXXXXX)
bg=()
cleanup() {
  local p
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  if ((t_failed > 0)); then
    echo "--- device plugin log (tail)"
    tail -n 15 "$work/dp.log"
    echo "--- prometheus log (tail)"
    tail -n 10 "$work/prom.log"
    for f in "$work"/*.client "$work"/*.server; do
      [[ -e $f ]] && echo "--- ${f##*/} (tail)" && tail -n 4 "$f"
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

metrics=127.0.0.1:9469 prom=127.0.0.1:9090 ns=vm
pf_a=$(pf_of_numa 0) pf_b=$(pf_of_numa 1)
# Per pod: netns, VF index on pf_a, the slave carrying its rxe, the rxe, the slave's address.
pods=(trainer-a trainer-b idle)
declare -A pod_ns=([trainer-a]=pc-a [trainer-b]=pc-b [idle]=pc-i)
declare -A pod_vf=([trainer-a]=1 [trainer-b]=2 [idle]=3)
declare -A pod_slave=([trainer-a]=pcsa [trainer-b]=pcsb [idle]=pcsi)
declare -A pod_rxe=([trainer-a]=rxpca [trainer-b]=rxpcb [idle]=rxpci)
declare -A pod_ip=([trainer-a]=192.168.79.1 [trainer-b]=192.168.79.2 [idle]=192.168.79.3)
# The trainers' peers: VF index on pf_b, its rxe, its address; perftest's TCP port per flow.
declare -A peer_vf=([trainer-a]=1 [trainer-b]=2)
declare -A peer_rxe=([trainer-a]=rxpeera [trainer-b]=rxpeerb)
declare -A peer_ip=([trainer-a]=192.168.79.11 [trainer-b]=192.168.79.12)
declare -A flow_port=([trainer-a]=18611 [trainer-b]=18612)
declare -A peer_netdev gid peer_gid

cni() { # CMD POD
  local n=${pod_ns[$2]} vf
  vf=$(vf_pci_of "$pf_a" "${pod_vf[$2]}")
  CNI_COMMAND=$1 CNI_NETNS=/var/run/netns/$n CNI_CONTAINERID=$n CNI_IFNAME=net1 \
    CNI_PATH=/usr/lib/cni RDMANET_STATE_DIR=$work/state \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=$ns;K8S_POD_NAME=$2;K8S_POD_UID=uid-$2" \
    "$cni_bin" 2>>"$work/cni.log" <<EOF
{"cniVersion": "1.1.0", "name": "roce", "type": "rdmanet", "mode": "sriov", "deviceID": "$vf",
 "vlan": 100, "lossless": {"priority": 3, "check": "warn"},
 "ipam": {"type": "static", "addresses": [{"address": "192.168.80.${pod_vf[$2]}/24"}]}}
EOF
}

# route FROM_DEV FROM_IP TO_IP TO_MAC TABLE: FROM_IP -> TO_IP leaves through FROM_DEV (every
# address is local to this netns: roce_pods.sh's policy routing, one `oif` rule per direction).
route() {
  ip route add "$3/32" dev "$1" table "$5" &&
    ip rule add pref 10 from "$2" to "$3" oif "$1" lookup "$5" &&
    ip neigh replace "$3" lladdr "$4" dev "$1" nud permanent
}

setup() {
  local p n dev peer i=0
  for p in "${pods[@]}"; do
    ip netns add "${pod_ns[$p]}" && cni ADD "$p" >/dev/null ||
      { echo "CNI ADD of $p: $(tail -n 3 "$work/cni.log")" && return 1; }
  done
  for p in trainer-a trainer-b; do
    peer=$(netdev_of_pci "$(vf_pci_of "$pf_b" "${peer_vf[$p]}")")
    peer_netdev[$p]=$peer
    ip link set "$pf_b" vf "${peer_vf[$p]}" vlan 100 qos 3 && ip link set "$peer" up || return 1
  done
  for p in "${pods[@]}"; do
    n=${pod_ns[$p]}
    wait_carrier -n "$n" net1 90 || { echo "$p's VF has no carrier" && return 1; }
    ip -n "$n" link add link net1 name "${pod_slave[$p]}" type ipvlan mode l2 &&
      ip -n "$n" link set "${pod_slave[$p]}" netns 1 || return 1
  done
  for p in trainer-a trainer-b; do
    wait_carrier "${peer_netdev[$p]}" 90 ||
      { echo "${peer_netdev[$p]} has no carrier" && return 1; }
  done
  for dev in all default "${pod_slave[@]}" "${peer_netdev[@]}"; do
    sysctl -qw "net.ipv4.conf.$dev.accept_local=1" "net.ipv4.conf.$dev.rp_filter=0" || return 1
  done
  for p in "${pods[@]}"; do
    ip addr add "${pod_ip[$p]}/32" dev "${pod_slave[$p]}" && ip link set "${pod_slave[$p]}" up ||
      return 1
  done
  for p in trainer-a trainer-b; do
    ip addr add "${peer_ip[$p]}/32" dev "${peer_netdev[$p]}" || return 1
    route "${pod_slave[$p]}" "${pod_ip[$p]}" "${peer_ip[$p]}" "$(mac_of "${peer_netdev[$p]}")" \
      $((191 + i)) &&
      route "${peer_netdev[$p]}" "${peer_ip[$p]}" "${pod_ip[$p]}" "$(mac_of "${pod_slave[$p]}")" \
        $((193 + i)) || return 1
    i=$((i + 1))
  done
  ip rule add pref 100 lookup local && ip rule del pref 0 || return 1
  for p in "${pods[@]}"; do
    rdma link add "${pod_rxe[$p]}" type rxe netdev "${pod_slave[$p]}" || return 1
  done
  for p in trainer-a trainer-b; do
    rdma link add "${peer_rxe[$p]}" type rxe netdev "${peer_netdev[$p]}" || return 1
    vm_poll 30 roce_gid_index "${pod_rxe[$p]}" "${pod_ip[$p]}" >/dev/null &&
      vm_poll 30 roce_gid_index "${peer_rxe[$p]}" "${peer_ip[$p]}" >/dev/null ||
      { echo "no RoCE v2 GID for $p's addresses" && return 1; }
    gid[$p]=$(roce_gid_index "${pod_rxe[$p]}" "${pod_ip[$p]}")
    peer_gid[$p]=$(roce_gid_index "${peer_rxe[$p]}" "${peer_ip[$p]}")
  done
}

# flows SECS TAG: both trainers write to their peers for SECS seconds (ib_write_bw, 4 KiB
# messages); the servers are the peers. perftest's TCP exchange runs over the loopback: the
# RDMA path is set by the GID indexes alone. Returns once both clients are running; flows_wait
# waits for the end.
flow_pids=()
flows() {
  local p args
  flow_pids=()
  for p in trainer-a trainer-b; do
    args=(-p "${flow_port[$p]}" -D "$1" -s 4096 --report_gbits)
    timeout 120 ib_write_bw -d "${peer_rxe[$p]}" -x "${peer_gid[$p]}" "${args[@]}" \
      >"$work/$2-$p.server" 2>&1 &
    flow_pids+=($!)
    vm_poll 30 bash -c "ss -Hltn 'sport = :${flow_port[$p]}' | grep -q ." ||
      { echo "the server of $p's flow did not listen" && return 1; }
    timeout 120 ib_write_bw -d "${pod_rxe[$p]}" -x "${gid[$p]}" "${args[@]}" 127.0.0.1 \
      >"$work/$2-$p.client" 2>&1 &
    flow_pids+=($!)
  done
  bg+=("${flow_pids[@]}")
}
# perftest may fail to produce its report on a loaded TCG vCPU after a good transfer (roce_pods.sh,
# roce_perftest): the counters, not its exit code, tell whether traffic flowed.
flows_wait() { wait "${flow_pids[@]}" 2>/dev/null; }

scrape() { curl -fsS "http://$metrics/metrics" >"$1"; }
# rises BEFORE AFTER: rise[POD/NAME] = how much pod POD's rdmanet_pod_rdma_NAME_total series
# (namespace vm, summed) rose between two scrapes; one awk for all (forks are slow under TCG).
declare -A rise
rises() {
  local key v
  rise=()
  while read -r key v; do rise[$key]=$v; done < <(awk -v n="namespace=\"$ns\"" '
    FNR == 1 { f++ }
    /^rdmanet_pod_rdma_[a-z_]*_total\{/ && index($0, n) {
      m = $0; sub(/^rdmanet_pod_rdma_/, "", m); sub(/_total\{.*/, "", m)
      p = $0; sub(/.*[{,]pod="/, "", p); sub(/".*/, "", p)
      d[p "/" m] += (f == 1 ? -$NF : $NF)
    }
    END { for (k in d) printf "%s %d\n", k, d[k] }' "$1" "$2")
}
r() { echo "${rise[$1/$2]:-0}"; } # r POD NAME
# show WHAT: each pod's rises (after `rises`), one line per pod.
show() {
  local p m line
  for p in "${pods[@]}"; do
    line="$p, $1:"
    for m in tx_packets rx_packets retransmits sequence_errors out_of_sequence; do
      line+=" +$(r "$p" "$m") $m"
    done
    step "$line"
  done
}

# promql QUERY TIME: Prometheus's answer at TIME as "pod value" lines, in its order.
promql() {
  curl -fsS "http://$prom/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$2" |
    jq -r '.data.result[] | "\(.metric.pod) \(.value[1])"'
}
# prom_has_all QUERY TIME: the answer names every pod (the samples up to TIME are in).
prom_has_all() { (($(promql "$1" "$2" | wc -l) == ${#pods[@]})); }
# prom_answer SELECTOR RANGE TIME WHEN: the pods by the rate of SELECTOR's series over RANGE at
# TIME, highest first, once Prometheus has them all (the checks on the answer fail if it never
# does); the query and its answer are shown on stderr.
prom_answer() {
  local q="sort_desc(sum by (pod) (rate($1[$2])))" ans=()
  vm_poll 30 prom_has_all "$q" "$3" || echo "Prometheus has no answer for every pod at $3" >&2
  mapfile -t ans < <(promql "$q" "$3")
  echo "PromQL at $4: $q" >&2
  printf '  %s\n' "${ans[@]}" >&2
  printf '%s\n' "${ans[@]}"
}

# --- set-up ---------------------------------------------------------------------------------------
if ! setup >"$work/setup.log" 2>&1; then
  t_fail "setting up the pods and their Soft-RoCE devices: $(cat "$work/setup.log")"
  t_done
  exit
fi
step "pods on $pf_a: trainer-a (${pod_rxe[trainer-a]} on ${pod_slave[trainer-a]}), trainer-b" \
  "(${pod_rxe[trainer-b]}), idle (${pod_rxe[idle]}); peers on $pf_b: ${peer_netdev[*]}"

echo '{"resourceList": [{"resourceName": "vf", "selectors": [{"drivers": ["igbvf"]}]}]}' \
  >"$work/pools.json"
mkdir -p "$work/kubelet/device-plugins"
"$dp_bin" --config "$work/pools.json" --kubelet-dir "$work/kubelet" --sysfs-root / \
  --devinfo-dir "$work/devinfo" --metrics-addr "$metrics" --cni-state-dir "$work/state" \
  --doctor-interval 0 >"$work/dp.log" 2>&1 &
bg+=($!)
cat >"$work/prom.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: rdmanet
    honor_labels: true
    static_configs: [{targets: ['$metrics']}]
EOF
/usr/bin/prometheus --config.file="$work/prom.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="$prom" --log.level=warn >"$work/prom.log" 2>&1 &
bg+=($!)
t_run "the daemon serves /metrics" vm_poll 60 scrape "$work/s0"
t_run "Prometheus scrapes the daemon" vm_poll 90 bash -c \
  "curl -fsS 'http://$prom/api/v1/query' --data-urlencode 'query=up{job=\"rdmanet\"} == 1' |
    jq -e '.data.result | length == 1' >/dev/null"
for p in "${pods[@]}"; do
  t_match "$p's device is its own rxe (${pod_rxe[$p]})" \
    "rdmanet_pod_device_info\{namespace=\"$ns\",pod=\"$p\",.*rdma_device=\"${pod_rxe[$p]}\"" \
    "$(grep '^rdmanet_pod_device_info' "$work/s0")"
done
step "daemon and Prometheus up"

# moving BASE: both trainers' tx packets rose by more than 100 since scrape BASE (their flows run).
moving() {
  local p
  scrape "$work/now" || return 1
  rises "$1" "$work/now"
  for p in trainer-a trainer-b; do
    (($(r "$p" tx_packets) > 100)) || return 1
  done
}
# sending_now: Prometheus's rate of tx packets by pod over the last 5 s, now, has both trainers
# above 0 (perftest's flows do not start or end at the same moment); the answer is in $ans1.
q1="sort_desc(sum by (pod) (rate(rdmanet_pod_rdma_tx_packets_total{namespace=\"$ns\"}[5s])))"
sending_now() {
  ans1=$(promql "$q1" "$(date +%s.%N)")
  (($(awk '$1 ~ /^trainer-/ && $2 > 0' <<<"$ans1" | wc -l) == 2))
}

# --- 1. traffic -----------------------------------------------------------------------------------
scrape "$work/s1"
flows 8 clean || t_fail "starting the flows"
vm_poll 30 moving "$work/s1" || t_fail "the flows did not start"
vm_poll 30 sending_now || echo "Prometheus never saw both trainers sending in one answer"
echo "PromQL while both trainers send: $q1"
printf '  %s\n' "${ans1//$'\n'/$'\n'  }"
t_eq "PromQL: both trainers send" "$(awk '$1 ~ /^trainer-/ && $2 > 0' <<<"$ans1" | wc -l)" 2
t_match "PromQL: idle sends nothing while the trainers do" '^idle 0$' "$(grep '^idle ' <<<"$ans1")"
flows_wait
scrape "$work/s2"
rises "$work/s1" "$work/s2"
show "no loss"
for p in trainer-a trainer-b; do
  got=$(r "$p" tx_packets)
  t_run "$p's tx packets rise under its own labels (+$got >= 1000)" test "$got" -ge 1000
done
for m in tx_packets rx_packets tx_bytes rx_bytes; do
  t_eq "idle's $m stay flat" "$(r idle "$m")" 0
done

# --- 2. loss on trainer-a's side of the wire ------------------------------------------------------
loss=5%
t_run "netem drops $loss of what leaves trainer-a's VF" \
  tc -n "${pod_ns[trainer-a]}" qdisc add dev net1 root netem loss "$loss"
scrape "$work/s3"
flows 14 lossy || t_fail "starting the flows"
# The doctor samples while both flows run: once both trainers' counters move.
vm_poll 30 moving "$work/s3" || t_fail "the flows did not start"
"$doctor_bin" pods --interval 5 --json --cni-state-dir "$work/state" >"$work/doctor.json" \
  2>"$work/doctor.err"
doctor_rc=$?
t_doctor=$(date +%s.%N)
flows_wait
scrape "$work/s4"
t4=$(date +%s.%N)
rises "$work/s3" "$work/s4"
show "$loss loss on trainer-a"
# trainer-a's loss shows as sequence errors (the peer NAKed a gap) and retransmits. trainer-b's
# path loses nothing, but a busy emulated CPU delays ACKs past rxe's timer now and then (about
# one retransmit a second in a clean run): its retransmits are judged against trainer-a's, with
# margins far from both (5%: 303 against 22; sequence errors 201 against 0).
a_retr=$(r trainer-a retransmits) a_seq=$(r trainer-a sequence_errors)
b_retr=$(r trainer-b retransmits)
b_gap=$(($(r trainer-b sequence_errors) + $(r trainer-b out_of_sequence)))
t_run "trainer-a's retransmits rise (+$a_retr >= 100)" test "$a_retr" -ge 100
t_run "trainer-a's sequence errors rise (+$a_seq >= 50)" test "$a_seq" -ge 50
t_run "trainer-b still sends (+$(r trainer-b tx_packets) tx packets >= 1000)" \
  test "$(r trainer-b tx_packets)" -ge 1000
name="trainer-b's sequence errors and out-of-sequence do not rise (+$b_gap,"
t_run "$name at most a tenth of trainer-a's $a_seq)" test $((b_gap * 10)) -le "$a_seq"
name="trainer-b's retransmits do not rise with trainer-a's (+$b_retr,"
t_run "$name at most a quarter of $a_retr)" test $((b_retr * 4)) -le "$a_retr"
t_eq "idle's tx packets stay flat" "$(r idle tx_packets)" 0

echo "rdmanet-doctor pods (exit $doctor_rc):"
jq -r '.pods[] | "  \(.verdict) \(.pod) \(.rdma_device) loss \(.loss_per_s)/s: \(.summary)"' \
  "$work/doctor.json" || cat "$work/doctor.json" "$work/doctor.err"
t_eq "doctor pods puts trainer-a first" "$(jq -r '.pods[0].pod' "$work/doctor.json")" \
  "$ns/trainer-a"
# igb reports no PFC counters, so loss cannot be told from congestion: a WARN, not a FAIL.
t_eq "doctor pods: trainer-a WARNs (loss, and its port has no PFC counters)" \
  "$(jq -r '.pods[0].verdict' "$work/doctor.json")" WARN
t_run "doctor pods: trainer-a's loss rate is at least 4 times the next pod's" \
  jq -e '.pods[0].loss_per_s >= 4 * .pods[1].loss_per_s' "$work/doctor.json"
t_eq "doctor pods: idle PASSes" \
  "$(jq -r --arg p "$ns/idle" '.pods[] | select(.pod == $p) | .verdict' "$work/doctor.json")" PASS
t_eq "doctor pods exits 0 without a FAIL" "$doctor_rc" 0

# Every loss series, as the doctor's loss rate and the retransmit alert read them, over the
# doctor's interval while both flows ran.
loss_series='{__name__=~"rdmanet_pod_rdma_(retransmits|sequence_errors|out_of_sequence)_total"'
ans2=$(prom_answer "$loss_series,namespace=\"$ns\"}" 8s "$t_doctor" "the doctor's end")
t_match "PromQL: trainer-a is on top" '^trainer-a ' "$(head -n 1 <<<"$ans2")"
t_run "PromQL: trainer-a's rate is at least 4 times the next pod's" awk \
  'NR == 1 { a = $2 } NR == 2 { b = $2 } END { exit !(a > 0 && a >= 4 * b) }' <<<"$ans2"
t_match "PromQL: idle loses nothing" '^idle 0$' "$(grep '^idle ' <<<"$ans2")"
step "done; Prometheus scraped the daemon $(promql "count_over_time(up{job=\"rdmanet\"}[5m])" \
  "$t4" | cut -d' ' -f2) times"
t_done
