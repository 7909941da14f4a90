#!/usr/bin/env bash
# Pod start latency under the real one-node cluster (hack/cluster; issue 22, section 6): pod
# create -> Ready, p50 and p95 over N pods (default 20), created one at a time, for
#   - a bare pod (eth0 only), the baseline;
#   - a device-plugin RDMA pod (rdma/vf: 1, eth1 wired by rdmanet through Multus);
#   - a DRA RDMA pod (a ResourceClaimTemplate of one VF, eth1 wired by rdmanet through Multus:
#     the CNI finds the claim's VF in the daemon's pod records, cni/modes/claimed_device.h).
# The cluster runs one API mode at a time: the first two are measured under --api deviceplugin,
# then the cluster comes up again with --api dra for the bare pod again and the DRA pod; each
# RDMA figure is compared with the bare pod of its own cluster, measured alternately with it.
# All in one run.
#
# Where the time goes, from the pod's own conditions as a watch delivers them (ms, on arrival):
#   schedule  create -> PodScheduled            (API server, scheduler; DRA: claim allocation)
#   sandbox   PodScheduled -> PodReadyToStartContainers
#                                               (kubelet admission and device allocation or DRA
#                                                prepare, the sandbox, CNI: bridge, Multus,
#                                                rdmanet ADD)
#   start     -> Ready                          (image, container create and start, CDI edits)
#
#   bench/cluster_pods.sh [--pods N]
# Needs root. Takes the test cluster down first and leaves it down. Prints a table and, last,
# one JSON line.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
pods=20
while (($#)); do
  case $1 in
    --pods) pods=$2 && shift 2 ;;
    *) echo "usage: $0 [--pods N]" >&2 && exit 2 ;;
  esac
done
[[ $pods =~ ^[0-9]+$ ]] && ((pods >= 2)) || { echo "cluster_pods: bad --pods $pods" >&2; exit 2; }
# shellcheck source=tests/cluster/lib.sh
. "$repo/tests/cluster/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"; "$cluster" down >/dev/null 2>&1 || true' EXIT
cd "$work"

# measure KIND I: creates pod I of KIND, waits until Ready, deletes it; prints one JSON line with
# the millisecond offsets of each condition from the create call.
measure() {
  local kind=$1 i=$2 name
  name=$kind-$i
  case $kind in
    bare) workload_pod "$name" "cpu: 100m" >pod.yaml ;;
    dp) workload_pod "$name" "cpu: 100m, rdma/vf: 1" "$rdma_net" >pod.yaml ;;
    dra) claim_pod_yaml "$name" "[{name: nic, exactly: {deviceClassName: vf.rdma.rdmanet.io}}]" \
      "" "$rdma_net" >pod.yaml ;;
  esac
  /usr/bin/python3 - "$(k8s_bin)/kubectl" "$kubeconfig" "$ns" "$name" pod.yaml <<'PY'
import json, subprocess, sys, time
kubectl, kubeconfig, ns, name, manifest = sys.argv[1:]
k = [kubectl, "--kubeconfig", kubeconfig]
watch = subprocess.Popen(
  k + ["get", "--raw", f"/api/v1/namespaces/{ns}/pods?watch=1&fieldSelector=metadata.name%3D{name}"
       "&timeoutSeconds=180"], stdout=subprocess.PIPE, text=True)
time.sleep(0.3)  # the watch is open before the pod exists
t0 = time.monotonic()
subprocess.run(k + ["create", "-f", manifest], check=True, stdout=subprocess.DEVNULL)
seen = {}
for line in watch.stdout:
  now = (time.monotonic() - t0) * 1000
  pod = json.loads(line)["object"]
  for c in pod.get("status", {}).get("conditions", []):
      if c["status"] == "True" and c["type"] not in seen:
          seen[c["type"]] = round(now, 1)
  if "Ready" in seen:
      break
watch.terminate()
if "Ready" not in seen:
  sys.exit(f"{name} not Ready within 180 s: {seen}")
print(json.dumps({"pod": name, **seen}))
PY
  if [[ $kind != bare ]]; then
    [[ $(pod_exec "$name" cat /sys/class/net/eth1/operstate) != down ]] || fail "$name: eth1 down"
  fi
  delete_pod "$name"
  [[ $kind != dra ]] || kc -n "$ns" delete resourceclaimtemplate "$name" >/dev/null
}
# measure_pair KIND: $pods bare pods and $pods pods of KIND, alternating, so that what drifts over
# the run (a cluster just up, caches warming) weighs on both alike.
measure_pair() {
  local i
  for ((i = 0; i < pods; i++)); do
    measure bare "$i" >>"$work/bare-$1.jsonl"
    measure "$1" "$i" >>"$work/$1.jsonl"
  done
}

# cluster_up installs its own EXIT trap (down); this one also removes the work dir.
up() {
  cluster_up "$1" >/dev/null
  trap 'rm -rf "$work"; "$cluster" down >/dev/null 2>&1 || true' EXIT
}
up deviceplugin
measure_pair dp
"$cluster" down >/dev/null
up dra
measure_pair dra

/usr/bin/python3 - "$work" "$pods" "$(k8s_version)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, statistics, sys
work, pods, k8s, load = sys.argv[1:]
def rows(f):
    return [json.loads(l) for l in open(f"{work}/{f}.jsonl")]
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]
def phases(r):
    sched = r.get("PodScheduled", 0)
    sandbox = r.get("PodReadyToStartContainers", sched)
    return {"total": r["Ready"], "schedule": sched, "sandbox": sandbox - sched,
            "start": r["Ready"] - sandbox}
out = {"k8s": k8s, "pods": int(pods), "load": load}
print(f"pod create -> Ready over {pods} pods each (ms), Kubernetes {k8s}, load {load}")
print(f"{'pod':<22}{'p50':>8}{'p95':>8}{'x bare p50':>12}   p50 of schedule / sandbox / start")
for kind, base in (("bare-dp", None), ("dp", "bare-dp"), ("bare-dra", None), ("dra", "bare-dra")):
    ph = [phases(r) for r in rows(kind)]
    s = {k: (pct([p[k] for p in ph], 50), pct([p[k] for p in ph], 95)) for k in ph[0]}
    ratio = "" if base is None else f"{s['total'][0] / out[base]['total']['p50']:.2f}x"
    label = {"bare-dp": "bare (dp cluster)", "dp": "device-plugin RDMA",
             "bare-dra": "bare (dra cluster)", "dra": "DRA RDMA"}[kind]
    print(f"{label:<22}{s['total'][0]:>8.0f}{s['total'][1]:>8.0f}{ratio:>12}   "
          f"{s['schedule'][0]:.0f} / {s['sandbox'][0]:.0f} / {s['start'][0]:.0f}")
    out[kind] = {k: {"p50": v[0], "p95": v[1]} for k, v in s.items()}
    if base:
        out[kind]["overhead_p50_ms"] = round(s["total"][0] - out[base]["total"]["p50"], 1)
print(json.dumps(out))
PY
