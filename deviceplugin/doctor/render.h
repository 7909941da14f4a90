#pragma once
// Renderers of a DoctorReport. Pure functions: they return text and do no I/O.

#include <string>

#include "common/inventory/node.h"
#include "deviceplugin/doctor/report.h"

namespace rdmanet::doctor {

// The human-readable default: the NIC x GPU distance matrix (nvidia-smi topo -m style), then
// one row per check (CHECK DEVICE VERDICT EVIDENCE) with the remedy under each non-PASS row,
// then a summary line.
std::string renderTable(const DoctorReport& report);

// The same data for machines:
//   {"verdict": "FAIL", "exit_code": 1, "summary": {"PASS": n, "WARN": n, "FAIL": n,
//    "UNKNOWN": n}, "checks": [{"check", "device", "verdict", "evidence": {k: v, ...} (reading
//    order), "remedy"}], "matrix": {"gpus": [...], "nics": [...], "distance": {nic: {gpu: "PIX"}}},
//   "counters": {"taken_at", "ports": {...}}, "baseline_taken_at" (with a baseline),
//   "deltas": [{"port", "counter", "class", "before", "after", "delta", "reset"}]}
std::string renderJson(const DoctorReport& report);

// Graphviz (dot) of the node's PCIe/NUMA layout: NUMA nodes as clusters, root complexes, root
// ports, PCIe switches (a cluster of the upstream and downstream ports), data-port NICs and
// GPUs. With `report`, devices are coloured by their worst verdict and bridges with ACS
// redirect on are marked red.
std::string renderDot(const NodeInventory& inv, const DoctorReport* report = nullptr);

// Prometheus text format (0.0.4), for the daemon's /metrics:
//   rdmanet_doctor_check{check="mtu",device="ens1f0"} 2       gauge: 0 pass 1 warn 2 fail
//                                                              3 unknown
//   rdmanet_doctor_rdma_counter{port="mlx5_0/1",counter="out_of_sequence",class="retransmit"}
//                                                              the judged counters' values
//   rdmanet_doctor_counter_delta{port=...,counter=...,class=...}  growth since the baseline
//                                                              (the daemon's previous run);
//                                                              only with a baseline
std::string renderPrometheus(const DoctorReport& report);

}  // namespace rdmanet::doctor
