#pragma once
// The pre-flight's flow through the Kubernetes API (preflight.h documents the command):
//   1. delete probe pods earlier runs left in the namespace (a crashed run is recovered by the
//      next; one pre-flight runs at a time per namespace);
//   2. the nodes (--nodes, else by --resource or --claim-template), the NADs' MTUs, the pairs;
//   3. a server pod on each node that serves a pair; wait until each is Running with an eth1
//      address (Multus' network-status);
//   4. one pair at a time (concurrent pairs would share links and skew the bandwidth): a client
//      pod on the pair's source node, until it ends; its termination message is the probe's
//      summary;
//   5. each node's checklist and counters from rdmanet's daemon pod, through the pod proxy;
//   6. the counters as baseline ConfigMap rdmanet-preflight-baseline (one key per node);
//   7. every pod of the run deleted, also on failure and on interruption (unless --keep).
// A server or client pod that does not get there within --timeout fails its pairs, naming the
// node and why (the pod's condition or container state); a daemon that cannot be read makes its
// node's checklist UNKNOWN. Neither stops the run.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "common/kube/client.h"
#include "deviceplugin/doctor/preflight/cluster_reads.h"
#include "deviceplugin/doctor/preflight/judge.h"
#include "deviceplugin/doctor/preflight/node_health.h"
#include "deviceplugin/doctor/preflight/options.h"

namespace rdmanet::doctor::preflight {

struct PreflightSeams {
  kube::KubeClient* client = nullptr;
  const Clock* clock = nullptr;  // the --timeout deadlines
  // Waits one poll interval (a second on `clock` in production). Tests play kubelet and Multus
  // here: they update the pods the run created, then advance their clock.
  std::function<void()> tick{};
  std::function<int64_t()> wall_seconds{};  // the baseline's taken_at
  std::string run_id{};                     // a label value: [a-z0-9]{1,16}
  const std::atomic<bool>* stop = nullptr;  // SIGINT/SIGTERM came: clean up and return
  std::ostream* progress = nullptr;         // one line per step, for the admin (stderr)
};

struct PreflightReport {
  std::string run_id{};
  std::vector<NodeHealth> nodes{};
  std::vector<PairResult> pairs{};
  std::optional<BaselineRecord> baseline{};  // nullopt with --no-baseline
  std::vector<std::string> likely_nodes{};   // likelyNodes(pairs)
  std::vector<std::string> cleanup_errors{};
  Verdict verdict = Verdict::kUnknown;
  std::vector<Problem> problems() const;  // the nodes', then the pairs', in order
};

// The whole flow. Error 104 (or 7 for fewer than 2 nodes or a node without a NAD) when it stops
// before any probe ran: no access, no nodes, a NAD that does not exist; error 999 "interrupted"
// when `stop` was set. Pods already created are deleted in every case (unless --keep).
Result<PreflightReport> runPreflight(const PreflightOptions& o, const PreflightSeams& s);

}  // namespace rdmanet::doctor::preflight
