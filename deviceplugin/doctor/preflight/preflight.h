#pragma once
// `rdmanet-doctor preflight` (also `rdmanet-device-plugin doctor preflight`): the cross-node
// pre-flight a cluster admin runs before a training job, from any machine with a kubeconfig or
// in a pod with a service account:
//
//   rdmanet-doctor preflight --image IMAGE --network [NS/]NAD [--node-network NODE=[NS/]NAD]...
//       [--kubeconfig FILE] [--context NAME] [--nodes A,B,...] [--resource rdma/vf]
//       [--claim-template NAME [--driver rdma.rdmanet.io]] [--pairs ring|all]
//       [--namespace rdmanet] [--image-pull-policy P] [--privileged] [--probe-command CMD]
//       [--timeout 300] [--count 200] [--dscp 26] [--priority 3] [--daemon-namespace NS]
//       [--daemon-metrics-port 9109] [--bw-percent 90] [--rtt-p99-max-us 1000]
//       [--rtt-p50-max-us US] [--rtt-spread-max 4] [--loss-max 0] [--mtu BYTES] [--no-baseline]
//       [--keep] [--json]
//
// It finds the nodes with rdmanet devices (status.allocatable[--resource] > 0, or with
// --claim-template a ResourceSlice of --driver), starts an RDMA probe server pod on each
// (`doctor probe --listen`, probe/probe.h) and, one pair at a time, a client pod on the pair's
// other node whose termination message is the probe's summary (summary.h): bandwidth against
// the port, RTT p50/p99, the largest packet that crosses, the traffic class, the loss counters
// that grew. It reads each node's doctor checklist and RDMA counters from rdmanet's daemon
// (/metrics through the API server's pod proxy), records the counters as the baseline
// ConfigMap rdmanet-preflight-baseline, judges (judge.h), and prints a table or JSON
// (render.h). run.h holds the flow; every pod it makes is deleted at the end, also on failure
// and on SIGINT/SIGTERM. One pre-flight runs at a time per namespace. Each node needs two free
// devices while it runs: its server pod's and, during its own pairs, its client pod's.
//
// Exit: 0 no FAIL; 1 a FAIL; 2 usage error, API failure before any probe ran (no access, fewer
// than 2 nodes, a missing NAD), or interrupted.
//
// RBAC it needs: nodes list (or resourceslices list); pods create/get/list/delete and pods/proxy
// get in the namespaces; network-attachment-definitions get; configmaps get/create/update.

#include <atomic>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "common/kube/client.h"
#include "common/kube/config.h"
#include "deviceplugin/doctor/preflight/options.h"

namespace rdmanet::doctor::preflight {

// What the subcommand needs from the process; hostPreflightDeps() gives the real ones.
struct PreflightCliDeps {
  // The API server: --kubeconfig, else $KUBECONFIG, else in-cluster.
  std::function<Result<kube::KubeConfig>(const PreflightOptions&)> kube_config{};
  kube::ClientOptions client{};  // its clock is `clock` when unset
  const Clock* clock = nullptr;
  std::function<void()> tick{};  // one poll interval
  std::function<int64_t()> wall_seconds{};
  std::function<std::string()> run_id{};
  const std::atomic<bool>* stop = nullptr;
};

// The real ones: `clock` (a SteadyClock, which must outlive the run), 1 s ticks on it, wall
// time, a random 8-hex-digit run id, and the kube config loaders (config.h); `stop` is left to
// the caller (runHostPreflight sets it).
PreflightCliDeps hostPreflightDeps(const Clock& clock);

// The subcommand (args exclude "preflight"): parses, runs, prints; returns the exit code.
int runPreflightCli(const std::vector<std::string>& args, const PreflightCliDeps& deps,
                    std::ostream& out, std::ostream& err);
// runPreflightCli with hostPreflightDeps() and SIGINT/SIGTERM turned into its stop flag (they
// are blocked for the run and waited for by a thread of its own), for the binaries' mains.
int runHostPreflight(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace rdmanet::doctor::preflight
