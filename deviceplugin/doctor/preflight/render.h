#pragma once
// The pre-flight's report for people (a table) and for machines (JSON).
//
// JSON, one object:
//   {"v":1, "run":"<id>", "verdict":"PASS|WARN|FAIL|UNKNOWN",
//    "nodes":[{"node", "checklist", "failing_checks":[..], "daemon_pod", "reason",
//              "checks":[{"check","device","verdict"}], "counters":{port:{name:n}}}],
//    "pairs":[{"from", "to", "verdict", "failure", "seconds", "device", "gbps", "port_gbps",
//              "bw_percent", "rtt_p50_us", "rtt_p99_us", "rtt_spread", "path_mtu", "roce_mtu",
//              "local_mtu", "peer_mtu", "traffic_class", "dscp", "counters_delta":{..},
//              "probe_problems":[..], "failed_stage", "error"}],
//    "problems":[{"subject","check","verdict","message","cause"}],
//    "likely_nodes":["node C: every pair through it, and only those, has rtt problems (4 pairs)"],
//    "baseline":{"configmap","taken_at","nodes":[..],"error"} | null,
//    "cleanup_errors":[..]}
// A measurement the probe did not make is absent from its pair.

#include <string>

#include "deviceplugin/doctor/preflight/run.h"

namespace rdmanet::doctor::preflight {

std::string renderPreflightTable(const PreflightReport& r);
std::string renderPreflightJson(const PreflightReport& r);

}  // namespace rdmanet::doctor::preflight
