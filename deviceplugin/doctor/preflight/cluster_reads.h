#pragma once
// The pre-flight's reads and writes of cluster state other than its pods: the nodes to test,
// the NADs' MTUs, each node's daemon /metrics (through the pod proxy) and the baseline
// ConfigMap. Each is one small function over the KubeClient, so run.cc reads as the flow.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "common/kube/client.h"
#include "deviceplugin/doctor/preflight/judge.h"
#include "deviceplugin/doctor/preflight/node_health.h"
#include "deviceplugin/doctor/preflight/options.h"

namespace rdmanet::doctor::preflight {

inline constexpr std::string_view kBaselineConfigMap = "rdmanet-preflight-baseline";

struct BaselineRecord {
  std::string configmap{};  // "ns/name"
  int64_t taken_at = 0;
  std::vector<std::string> nodes{};  // the keys written
  std::string error{};               // why it was not written
};

// --nodes, else the nodes with --resource (or --claim-template's driver's slices), sorted.
Result<std::vector<std::string>> findNodes(kube::KubeClient& c, const Clock& clock,
                                           const PreflightOptions& o);
// Each node's expected eth1 MTU: --mtu, else its NAD's "mtu" (nullopt: none). Error 104 naming
// the NAD when it cannot be read (404: it does not exist), 7 when a node has no NAD.
Result<std::map<std::string, MtuExpectation>> expectedMtus(kube::KubeClient& c, const Clock& clock,
                                                           const PreflightOptions& o,
                                                           const std::vector<std::string>& nodes);
// The node's daemon pod (label app.kubernetes.io/component=node on the node) and its /metrics
// parsed; never fails: a node that cannot be read comes back with reached=false and the reason.
NodeHealth readNodeHealth(kube::KubeClient& c, const Clock& clock, const PreflightOptions& o,
                          const std::string& node);
// Writes each reached node's counters (the doctor's baseline format, counters.h) as a key of
// ConfigMap kBaselineConfigMap in o.ns: created, or updated keeping other nodes' keys.
BaselineRecord recordBaseline(kube::KubeClient& c, const Clock& clock, const PreflightOptions& o,
                              const std::vector<NodeHealth>& nodes, int64_t now);

}  // namespace rdmanet::doctor::preflight
