#!/usr/bin/python3
"""parse_metrics.py EMITTER: parses the daemon's /metrics text (EMITTER's output) with the Prometheus
client library's parser (Debian's python3-prometheus-client), as a Prometheus server would,
and checks what it reads back: every family with its type, escaped label values intact,
histograms consistent, no family twice. Exit 0 when all hold, 1 otherwise, 77 (skip) when
the library is not installed."""
import subprocess
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("SKIP: python3-prometheus-client is not installed (hack/install-deps.sh)")
    sys.exit(77)

HOSTILE = 'rdma/we"ird\\name\nnext'
EXPECTED_TYPES = {
    "rdmanet_dp_devices": "gauge",
    "rdmanet_dp_registered": "gauge",
    "rdmanet_dp_registrations": "counter",
    "rdmanet_dp_health_transitions": "counter",
    "rdmanet_dp_allocations": "counter",
    "rdmanet_dp_allocate_duration_seconds": "histogram",
    "rdmanet_dra_claim_operations": "counter",
    "rdmanet_dra_claim_operation_duration_seconds": "histogram",
    "rdmanet_dra_events": "counter",
    "rdmanet_port_lldp_neighbor_info": "gauge",
    "rdmanet_dra_slice_generation": "gauge",
    "rdmanet_dra_slice_publish_failures": "counter",
    "rdmanet_dra_api_field_dropped": "gauge",
    "rdmanet_doctor_check": "gauge",
    "rdmanet_doctor_rdma_counter": "counter",
    "rdmanet_doctor_counter_delta": "gauge",
    "rdmanet_pod_device_info": "gauge",
    "rdmanet_port_pfc_pause_frames": "counter",
    "rdmanet_port_pfc_pause_duration_seconds": "counter",
    "rdmanet_port_link_down_events": "counter",
    "rdmanet_pod_rdma_driver_counter": "counter",
    "rdmanet_pod_vf_rx_bytes": "counter",
    "rdmanet_pod_vf_tx_dropped": "counter",
    "rdmanet_pod_netdev_rx_bytes": "counter",
    "rdmanet_pod_netdev_tx_bytes": "counter",
    "rdmanet_pod_netdev_rx_packets": "counter",
    "rdmanet_pod_netdev_tx_packets": "counter",
}
# Issue 24's metric contract: every pod RDMA counter family, with its labels.
for m in ["cnp_sent", "cnp_handled", "ecn_marked_packets", "out_of_sequence", "sequence_errors",
          "retransmits", "rnr_naks", "rx_bytes", "tx_bytes", "rx_packets", "tx_packets"]:
    EXPECTED_TYPES[f"rdmanet_pod_rdma_{m}"] = "counter"
POD_LABELS = {"namespace", "pod", "interface", "device", "rdma_device", "mode"}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


text = subprocess.run([sys.argv[1]], capture_output=True, text=True, check=True).stdout
families = list(text_string_to_metric_families(text))
names = [f.name for f in families]
check(len(names) == len(set(names)), f"a family appears twice: {names}")
by_name = {f.name: f for f in families}
for name, typ in EXPECTED_TYPES.items():
    check(name in by_name, f"family {name} missing")
    if name in by_name:
        check(by_name[name].type == typ, f"{name} is {by_name[name].type}, want {typ}")
        check(by_name[name].documentation != "", f"{name} has no HELP")

devices = {(s.labels["resource"], s.labels["health"]): s.value
           for s in by_name["rdmanet_dp_devices"].samples}
check(devices.get((HOSTILE, "healthy")) == 3, f"hostile pool's healthy devices: {devices}")
check(devices.get(("rdma/shared", "unhealthy")) == 0, "rdma/shared unhealthy gauge")

dropped = {(s.labels["field"], s.labels["gate"]): s.value
           for s in by_name["rdmanet_dra_api_field_dropped"].samples}
check(dropped == {("taints", "DRADeviceTaints"): 1,
                  ("allowMultipleAllocations", "DRAConsumableCapacity"): 0,
                  ("sharedCounters", "DRAPartitionableDevices"): 0},
      f"dropped fields: {dropped}")
check(by_name["rdmanet_dra_slice_generation"].samples[0].value == 7, "slice generation")
check(by_name["rdmanet_dra_slice_publish_failures"].samples[0].value == 2, "publish failures")

regs = {(s.labels["resource"], s.labels["result"]): s.value
        for s in by_name["rdmanet_dp_registrations"].samples}
check(regs.get((HOSTILE, "refused")) == 1, f"registrations: {regs}")

for resource in ("rdma/vf", HOSTILE):
    samples = [s for s in by_name["rdmanet_dp_allocate_duration_seconds"].samples
               if s.labels.get("resource") == resource]
    buckets = sorted(((float(s.labels["le"]), s.value) for s in samples
                      if s.name.endswith("_bucket")))
    counts = [v for _, v in buckets]
    check(counts == sorted(counts), f"{resource}: buckets not cumulative: {buckets}")
    check(buckets and buckets[-1][0] == float("inf"), f"{resource}: no +Inf bucket")
    total = [s.value for s in samples if s.name.endswith("_count")]
    check(total == [5] and buckets[-1][1] == 5, f"{resource}: count {total}, +Inf {buckets[-1]}")
    sums = [s.value for s in samples if s.name.endswith("_sum")]
    check(sums and abs(sums[0] - 2.04325) < 1e-9, f"{resource}: sum {sums}")

ops = {(s.labels["operation"], s.labels["result"]): s.value
       for s in by_name["rdmanet_dra_claim_operations"].samples}
check(ops == {("prepare", "ok"): 2, ("prepare", "error"): 2, ("unprepare", "ok"): 1},
      f"claim operations: {ops}")
prep = {float(s.labels["le"]): s.value
        for s in by_name["rdmanet_dra_claim_operation_duration_seconds"].samples
        if s.labels["operation"] == "prepare" and s.name.endswith("_bucket")}
check(prep.get(0.005) == 1 and prep.get(30.0) == 3 and prep.get(float("inf")) == 4,
      f"prepare buckets: {prep}")
events = {s.labels["result"]: s.value for s in by_name["rdmanet_dra_events"].samples}
check(events == {"sent": 1, "repeat": 2, "dropped": 1}, f"events: {events}")

neighbors = {s.labels["port"]: (s.labels, s.value)
             for s in by_name["rdmanet_port_lldp_neighbor_info"].samples}
check(neighbors.get("ens1f0") == ({"port": "ens1f0", "switch": "leaf-7",
                                   "switch_chassis_id": "0c:42:a1:00:00:07",
                                   "switch_port": "Ethernet1/3", "rail": "rail-3"}, 1),
      f"LLDP neighbours: {neighbors}")
check(neighbors.get("ens2f1", ({},))[0].get("switch") == HOSTILE, "escaped switch round trip")

checks = {(s.labels["check"], s.labels["device"]): s.value
          for s in by_name["rdmanet_doctor_check"].samples}
check(checks.get(("mtu", "ens2f1")) == 2, "the MTU failure on ens2f1")
check(checks.get(("x", 'a"b\\c\nd')) == 1, "escaped doctor label round trip")
deltas = {(s.labels["port"], s.labels["counter"]): s.value
          for s in by_name["rdmanet_doctor_counter_delta"].samples}
check(deltas.get(("mlx5_0/1", "roce_adp_retrans")) == 5, f"counter delta: {deltas}")

oos = by_name["rdmanet_pod_rdma_out_of_sequence"].samples
check(len(oos) == 1 and oos[0].value == 7, f"out_of_sequence: {oos}")
check(oos and POD_LABELS | {"port", "counter"} == set(oos[0].labels), f"pod labels: {oos}")
check(oos and oos[0].labels["pod"] == 'trainer-"0"', "escaped pod label round trip")
txb = by_name["rdmanet_pod_rdma_tx_bytes"].samples
check(txb and txb[0].value == 40, f"port_xmit_data words as bytes: {txb}")
info = by_name["rdmanet_pod_device_info"].samples
check(info and POD_LABELS | {"uid", "netdev", "priority"} == set(info[0].labels), f"info: {info}")
vf = by_name["rdmanet_pod_vf_rx_bytes"].samples
check(vf and POD_LABELS == set(vf[0].labels) and vf[0].value == 3, f"vf: {vf}")
nd = by_name["rdmanet_pod_netdev_tx_bytes"].samples
check(nd and POD_LABELS == set(nd[0].labels) and nd[0].value == 2100000000, f"netdev: {nd}")
dur = by_name["rdmanet_port_pfc_pause_duration_seconds"].samples
check(dur and abs(dur[0].value - 0.0015) < 1e-12, f"pause duration in seconds: {dur}")
check(dur and {"netdev", "device", "priority", "direction", "pods"} == set(dur[0].labels),
      f"port labels: {dur}")

samples = sum(len(f.samples) for f in families)
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"PASS: {len(families)} families, {samples} samples parsed by prometheus_client")
