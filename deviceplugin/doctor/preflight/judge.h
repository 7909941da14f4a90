#pragma once
// The pre-flight's judgement: each pair from its probe summary, each node from its checklist,
// and the run as the worst of them. Pure functions; every problem names its pair ("A -> B") or
// node and the likely cause, in the doctor's words (a remedy that says where to look).
//
// A pair FAILs when the probe failed (the stage and its error), bandwidth is below bw_percent of
// the port speed (UNKNOWN when the port speed is unknown), RTT p99 is above rtt_p99_max_us (or
// the median above rtt_p50_max_us, when set), the loss counters grew by more than loss_max
// during the run (out-of-sequence, sequence errors, retransmits and ACK
// time-outs: podnet's counter_names.h), fewer round trips completed than were sent, the path MTU
// is below the expected one (the NAD's or --mtu; without one, below the smaller of the two
// ends'), or the traffic class carries another DSCP than the pool's. It WARNs when RTT p99/p50 is
// above rtt_spread_max.

#include <optional>
#include <string>
#include <vector>

#include "deviceplugin/doctor/preflight/node_health.h"
#include "deviceplugin/doctor/preflight/plan.h"
#include "deviceplugin/doctor/preflight/summary.h"
#include "deviceplugin/doctor/report.h"

namespace rdmanet::doctor::preflight {

struct Problem {
  std::string subject{};  // "A -> B" or "node A"
  std::string check{};    // probe, bandwidth, rtt, rtt spread, loss, mtu, traffic class, checklist
  Verdict verdict = Verdict::kFail;
  std::string message{};  // what was measured, against what
  std::string cause{};    // the likely cause and where to look
};

struct PairResult {
  NodePair pair{};
  std::optional<ProbeSummary> summary{};
  std::string failure{};  // no summary: why (the pod never ran, no or a bad termination message)
  double seconds = 0;     // the pair's client pod from creation to its result (or its failure)
  Verdict verdict = Verdict::kUnknown;  // judgePair's
  std::vector<Problem> problems{};      // judgePair's
};

// What each pair is held to.
struct Expectations {
  double bw_percent = 90;
  double rtt_p99_max_us = 1000;
  double rtt_p50_max_us = 0;  // 0: none
  double rtt_spread_max = 4;
  uint64_t loss_max = 0;
  int dscp = 26;
  int priority = 3;
};

// The MTU a node's eth1 should carry, and where that comes from ("the NAD rdmanet/rdma-vf-1's",
// "--mtu"); nullopt: no expectation.
struct MtuExpectation {
  std::optional<int> mtu{};
  std::string source{};
};

std::string pairName(const NodePair& p);  // "A -> B"

// Sets r.verdict and r.problems. `from` and `to` are the two ends' expected MTUs.
void judgePair(PairResult& r, const Expectations& e, const MtuExpectation& from,
               const MtuExpectation& to);
// A node's checklist as problems: one per WARN or FAIL check, or one UNKNOWN naming why the
// daemon could not be read.
std::vector<Problem> nodeProblems(const NodeHealth& n);
// Where the pairs point at one node: for each check some pairs failed or warned, the node whose
// pairs are exactly those ("node C: every pair through it, and only those, has rtt problems (4
// pairs)"). Needs 3 nodes or more (with 2, every pair runs through both) and 2 such pairs or
// more; a check whose pairs share no single node gives no hint.
std::vector<std::string> likelyNodes(const std::vector<PairResult>& pairs);
// The worst of every node's checklist and every pair's verdict (PASS when there are none).
Verdict overallVerdict(const std::vector<NodeHealth>& nodes, const std::vector<PairResult>& pairs);

}  // namespace rdmanet::doctor::preflight
