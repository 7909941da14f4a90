#pragma once
// A node's own view, as rdmanet's daemon on it exports it on /metrics: the doctor checklist's
// verdicts (rdmanet_doctor_check{check,device} 0 pass, 1 warn, 2 fail, 3 unknown) and the RDMA
// ports' counters (rdmanet_doctor_rdma_counter{port,counter,class}), as
// deviceplugin/doctor/render_prometheus.cc writes them. The pre-flight reads that page through
// the API server's pod proxy, so it needs no route to the nodes.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/doctor/report.h"

namespace rdmanet::doctor::preflight {

struct CheckReading {
  std::string check{};
  std::string device{};
  Verdict verdict = Verdict::kUnknown;
};

using PortCounters = std::map<std::string, std::map<std::string, uint64_t>>;  // port -> name -> n

struct NodeHealth {
  std::string node{};
  std::string daemon_pod{};  // "ns/name", empty when none was found
  bool reached = false;      // its /metrics was read
  std::string reason{};      // why not, when not reached
  std::vector<CheckReading> checks{};
  PortCounters counters{};

  // The worst check (PASS < UNKNOWN < WARN < FAIL), PASS without checks; UNKNOWN when the
  // daemon was not reached.
  Verdict checklist() const;
  // "check (device)" of each WARN or FAIL check, in the page's order.
  std::vector<std::string> failingChecks() const;
};

// The two families out of a Prometheus text page (other lines are skipped, as a scraper skips
// what it does not know). Error 7 naming the line on a sample of these families that does not
// parse or a check value that is not a verdict.
Status parseDoctorMetrics(std::string_view text, NodeHealth& into);

}  // namespace rdmanet::doctor::preflight
