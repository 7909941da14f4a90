#include "deviceplugin/doctor/preflight/run.h"

#include <fmt/format.h>

#include <map>

#include "common/kube/api_error.h"
#include "deviceplugin/doctor/preflight/cluster_reads.h"
#include "deviceplugin/doctor/preflight/plan.h"
#include "deviceplugin/doctor/preflight/probe_pods.h"

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// How long the clean-up waits for the run's deleted pods to go (kubelet stops them in about a
// second; the CNI DEL that returns a VF takes a few more).
constexpr std::chrono::seconds kGoneWithin{60};

// The pods of one run: created through it, and all deleted when it ends (unless --keep), on
// every path out of runPreflight.
class Run {
 public:
  Run(const PreflightOptions& o, const PreflightSeams& s) : o_(o), s_(s) {}
  // The last chance to delete the run's pods; nothing may escape a destructor (a failure here
  // is already in cleanup_errors_, or was an allocation failure).
  ~Run() {
    try {
      cleanUp();
    } catch (...) {  // NOLINT(bugprone-empty-catch): see above
    }
  }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  void say(const std::string& line) const {
    if (s_.progress != nullptr) *s_.progress << "preflight: " << line << "\n";
  }
  bool stopped() const { return s_.stop != nullptr && s_.stop->load(); }
  Deadline request() const { return Deadline::in(30s, *s_.clock); }
  std::string podsPath() const { return fmt::format("/api/v1/namespaces/{}/pods", o_.ns); }

  // Earlier runs' pods: a crashed run's are deleted by the next.
  Status deleteLeftovers() {
    auto list = s_.client->list(
        podsPath(),
        {.label_selector = fmt::format("{}={},{}!={}", kAppLabel, kAppName, kRunLabel, s_.run_id)},
        request());
    if (!list.ok()) return list.error().context("listing earlier pre-flight pods");
    for (const auto& p : (*list).value("items", json::array())) {
      const std::string name = p["metadata"].value("name", "");
      say("deleting pod " + name + " of an earlier run");
      if (auto st = s_.client->remove(podsPath() + "/" + name, request());
          !st.ok() && !kube::isNotFound(st.error())) {
        return st.error().context("deleting an earlier run's pod " + name);
      }
    }
    return okStatus();
  }

  Status create(const ProbePod& pod) {
    auto r = s_.client->create(podsPath(), probePodManifest(o_, s_.run_id, pod), request());
    if (!r.ok()) return r.error().context(fmt::format("creating pod {} on {}", pod.name, pod.node));
    created_.push_back(pod.name);
    return okStatus();
  }

  Result<json> get(const std::string& name) {
    return s_.client->get(podsPath() + "/" + name, request());
  }

  void remove(const std::string& name) {
    auto st = s_.client->remove(podsPath() + "/" + name, request());
    if (!st.ok() && !kube::isNotFound(st.error())) {
      cleanup_errors_.push_back(st.error().msg);
      return;
    }
    std::erase(created_, name);
  }

  // Deletes this run's pods and waits, up to kGoneWithin, until the API server has none left:
  // a deleted pod lingers while kubelet stops it and its CNI DEL returns the device, and a
  // pre-flight that returned then would leave pods (and devices) behind. Still there after that:
  // a clean-up error naming them.
  void cleanUp() {
    if (o_.keep) return;
    const bool any = !created_.empty();
    for (const auto& name : std::vector<std::string>(created_)) remove(name);
    if (!any) return;
    const Deadline deadline = Deadline::in(kGoneWithin, *s_.clock);
    for (;;) {
      auto left = s_.client->list(
          podsPath(), {.label_selector = fmt::format("{}={}", kRunLabel, s_.run_id)}, request());
      if (left.ok() && (*left).value("items", json::array()).empty()) return;
      if (deadline.passed(*s_.clock)) {
        std::vector<std::string> names;
        if (left.ok()) {
          for (const auto& p : (*left)["items"]) names.push_back(p["metadata"].value("name", ""));
        }
        cleanup_errors_.push_back(
            left.ok() ? fmt::format("pods still there {} s after their deletion: {}",
                                    kGoneWithin.count(), fmt::join(names, ", "))
                      : left.error().context("listing the run's pods after deleting them").msg);
        return;
      }
      s_.tick();
    }
  }

  std::vector<std::string> takeCleanupErrors() { return std::move(cleanup_errors_); }
  const PreflightOptions& options() const { return o_; }
  const PreflightSeams& seams() const { return s_; }

 private:
  const PreflightOptions& o_;
  const PreflightSeams& s_;
  std::vector<std::string> created_{};
  std::vector<std::string> cleanup_errors_{};
};

// ", saying \"...\"": a termination message as evidence, its end when it is long (the last log
// lines say the most).
std::string saying(const std::string& message) {
  constexpr size_t kMax = 300;
  if (message.empty()) return {};
  const bool cut = message.size() > kMax;
  std::string tail = cut ? message.substr(message.size() - kMax) : message;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return fmt::format(", saying \"{}{}\"", cut ? "..." : "", tail);
}

Error interrupted() {
  return makeError(ErrorCode::kInternal,
                   "interrupted (SIGINT/SIGTERM): the run's pods were deleted");
}

// Phase 1: a server pod on each server node, then until each is Running with an eth1 address.
// Returns node -> its server's eth1 IPv4, or node -> "" with `why` set for those that failed.
Result<std::map<std::string, std::string>> startServers(Run& run,
                                                        const std::vector<std::string>& servers,
                                                        std::map<std::string, std::string>& why) {
  std::map<std::string, std::string> ip, pod_of;
  for (size_t i = 0; i < servers.size(); ++i) {
    ProbePod pod{.role = Role::kServer,
                 .name = probePodName(run.seams().run_id, Role::kServer, i),
                 .node = servers[i],
                 .nad = *run.options().nadOf(servers[i]),
                 .command = serverCommand(run.options())};
    if (auto st = run.create(pod); !st.ok()) {
      // No right to make pods: no probe can run at all (exit 2, as for any other access).
      if (kube::isForbidden(st.error()) || kube::isUnauthorized(st.error())) return st.error();
      why[servers[i]] = st.error().msg;
      continue;
    }
    pod_of[servers[i]] = pod.name;
  }
  run.say(fmt::format("{} probe server pods created; waiting for them to run", pod_of.size()));
  const Deadline deadline =
      Deadline::in(std::chrono::seconds(run.options().timeout_s), *run.seams().clock);
  std::map<std::string, PodProgress> last;
  while (!pod_of.empty()) {
    for (auto it = pod_of.begin(); it != pod_of.end();) {
      auto p = run.get(it->second);
      if (p.ok()) {
        last[it->first] = podProgress(*p);
        const auto addr = eth1Ipv4(*p);
        if (last[it->first].phase == "Running" && addr) {
          ip[it->first] = *addr;
          it = pod_of.erase(it);
          continue;
        }
        if (last[it->first].phase == "Failed" || last[it->first].phase == "Succeeded") {
          why[it->first] =
              fmt::format("the probe server pod {} on {} ended: {}{}", it->second, it->first,
                          last[it->first].describe(), saying(last[it->first].message));
          it = pod_of.erase(it);
          continue;
        }
      }
      ++it;
    }
    if (pod_of.empty()) break;
    if (run.stopped()) return interrupted();
    if (deadline.passed(*run.seams().clock)) {
      for (const auto& [node, name] : pod_of) {
        const auto& pr = last[node];
        why[node] = fmt::format(
            "the probe server pod {} on {} was not running with an eth1 address "
            "after {} s: {}{}",
            name, node, run.options().timeout_s, pr.describe(),
            pr.phase == "Running" ? ", no eth1 IPv4 in Multus' network-status" : "");
      }
      break;
    }
    run.seams().tick();
  }
  return ip;
}

// Phase 2, one pair: its client pod until it ends, then its summary.
Result<PairResult> probePair(Run& run, const NodePair& pair, size_t index,
                             const std::string& server_ip) {
  PairResult r{.pair = pair};
  ProbePod pod{.role = Role::kClient,
               .name = probePodName(run.seams().run_id, Role::kClient, index),
               .node = pair.from,
               .peer_node = pair.to,
               .nad = *run.options().nadOf(pair.from),
               .command = clientCommand(run.options(), server_ip)};
  if (auto st = run.create(pod); !st.ok()) {
    r.failure = st.error().msg;
    return r;
  }
  run.say(fmt::format("probing {} ({} -> {})", pairName(pair), pod.name, server_ip));
  const Deadline deadline =
      Deadline::in(std::chrono::seconds(run.options().timeout_s), *run.seams().clock);
  PodProgress last;
  for (;;) {
    if (auto p = run.get(pod.name); p.ok()) {
      last = podProgress(*p);
      if (last.terminated || last.phase == "Succeeded" || last.phase == "Failed") break;
    }
    if (run.stopped()) return interrupted();
    if (deadline.passed(*run.seams().clock)) {
      r.failure = fmt::format("the probe client pod {} on {} did not finish within {} s: {}",
                              pod.name, pair.from, run.options().timeout_s, last.describe());
      run.remove(pod.name);
      return r;
    }
    run.seams().tick();
  }
  run.remove(pod.name);  // frees its device for the next pair on this node
  if (last.message.empty()) {
    r.failure = fmt::format("the probe client pod {} on {} ended without a summary: {}", pod.name,
                            pair.from, last.describe());
    return r;
  }
  auto summary = parseProbeSummary(last.message);
  if (!summary.ok()) {
    r.failure =
        fmt::format("the probe client pod {} on {} left an unreadable summary ({}): {}{}", pod.name,
                    pair.from, summary.error().msg, last.describe(), saying(last.message));
    return r;
  }
  r.summary = std::move(*summary);
  return r;
}

}  // namespace

std::vector<Problem> PreflightReport::problems() const {
  std::vector<Problem> out;
  for (const auto& n : nodes) {
    for (auto& p : nodeProblems(n)) out.push_back(std::move(p));
  }
  for (const auto& p : pairs) out.insert(out.end(), p.problems.begin(), p.problems.end());
  return out;
}

Result<PreflightReport> runPreflight(const PreflightOptions& o, const PreflightSeams& s) {
  PreflightReport report{.run_id = s.run_id};
  Run run(o, s);
  RDMANET_RETURN_IF_ERROR(run.deleteLeftovers());
  RDMANET_ASSIGN_OR_RETURN(const std::vector<std::string> nodes, findNodes(*s.client, *s.clock, o));
  if (nodes.size() < 2) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{} node{} to test ({}): a pre-flight needs 2 or more",
                                 nodes.size(), nodes.size() == 1 ? "" : "s",
                                 !o.nodes.empty() ? "--nodes"
                                 : o.claim_template.empty()
                                     ? fmt::format("nodes with {} > 0", o.resource)
                                     : fmt::format("nodes with a ResourceSlice of {}", o.driver)));
  }
  RDMANET_ASSIGN_OR_RETURN(const auto mtus, expectedMtus(*s.client, *s.clock, o, nodes));
  const auto pairs = planPairs(nodes, o.pairs);
  run.say(fmt::format("run {}: {} nodes, {} pairs", s.run_id, nodes.size(), pairs.size()));

  std::map<std::string, std::string> server_failure;
  RDMANET_ASSIGN_OR_RETURN(const auto server_ip,
                           startServers(run, serverNodes(nodes, pairs), server_failure));
  const Expectations e{.bw_percent = o.bw_percent,
                       .rtt_p99_max_us = o.rtt_p99_max_us,
                       .rtt_p50_max_us = o.rtt_p50_max_us,
                       .rtt_spread_max = o.rtt_spread_max,
                       .loss_max = o.loss_max,
                       .dscp = o.dscp,
                       .priority = o.priority};
  for (size_t i = 0; i < pairs.size(); ++i) {
    PairResult r{.pair = pairs[i]};
    const auto started = s.clock->now();
    if (auto it = server_ip.find(pairs[i].to); it != server_ip.end()) {
      RDMANET_ASSIGN_OR_RETURN(r, probePair(run, pairs[i], i, it->second));
    } else {
      r.failure = server_failure[pairs[i].to];
    }
    r.seconds = std::chrono::duration<double>(s.clock->now() - started).count();
    judgePair(r, e, mtus.at(pairs[i].from), mtus.at(pairs[i].to));
    report.pairs.push_back(std::move(r));
  }
  run.cleanUp();  // before the daemons are read: the probes' devices are free again

  for (const auto& n : nodes) report.nodes.push_back(readNodeHealth(*s.client, *s.clock, o, n));
  if (!o.no_baseline) {
    report.baseline = recordBaseline(*s.client, *s.clock, o, report.nodes, s.wall_seconds());
  }
  report.likely_nodes = likelyNodes(report.pairs);
  report.cleanup_errors = run.takeCleanupErrors();
  report.verdict = overallVerdict(report.nodes, report.pairs);
  return report;
}

}  // namespace rdmanet::doctor::preflight
