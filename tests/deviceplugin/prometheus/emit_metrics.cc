// Prints what the daemon's /metrics serves (the daemon's series, the DRA front's ResourceSlice
// series, then the doctor's, as daemon/probes.cc concatenates them) for a node in a busy state:
// pools with hostile names, every counter family, histograms, and a doctor run with failures and
// counter deltas. The parse test (parse_metrics.py) reads it with the Prometheus client library's
// own parser.
#include <iostream>

#include "deviceplugin/doctor/render.h"
#include "deviceplugin/dra/slice_metrics.h"
#include "deviceplugin/metrics.h"
#include "tests/deviceplugin/doctor/doctor_node.h"

int main() {
  using rdmanet::dp::Metrics;
  Metrics m;
  // A resource name with every character the format must escape in a label value.
  const std::string hostile = "rdma/we\"ird\\name\nnext";
  for (const std::string& r : {std::string("rdma/vf"), hostile}) {
    m.setPoolDevices(r, 3, 1);
    m.setRegistered(r, true);
    m.countRegistration(r, "ok");
    m.countRegistration(r, "refused");
    m.countHealthTransition(r, false);
    m.countAllocation(r, true);
    m.countAllocation(r, false);
    for (double s : {0.00005, 0.0002, 0.003, 0.04, 2.0}) m.observeAllocateSeconds(r, s);
  }
  m.setPoolDevices("rdma/shared", 0, 0);  // registered never, no counters

  rdmanet::doctor::testing::DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens2f1/mtu", "1500");
  const auto baseline = node.run().counters;
  node.tree().writeAttr("/sys/class/infiniband/mlx5_0/ports/1/hw_counters/roce_adp_retrans", "5");
  rdmanet::doctor::DoctorReport report = node.run({}, &baseline);
  report.results.push_back({.check = "x",
                            .device = "a\"b\\c\nd",
                            .verdict = rdmanet::doctor::Verdict::kWarn,
                            .evidence = {}});
  // A DRA node whose API server runs without DRADeviceTaints: taints dropped, shared pools fine.
  const std::string slices = rdmanet::dp::renderSliceMetrics(
      {.published_version = 4, .generation = 7, .failures = 2, .taints_dropped = true});
  std::cout << m.render() << slices << rdmanet::doctor::renderPrometheus(report);
  return 0;
}
