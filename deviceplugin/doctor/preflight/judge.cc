#include "deviceplugin/doctor/preflight/judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "deviceplugin/podnet/counter_names.h"

namespace rdmanet::doctor::preflight {
namespace {

constexpr const char* kLossCause =
    "packets are lost on a path that should be lossless: check PFC on the priority end to end "
    "(both nodes' ports, the switch ports, trust mode and DSCP/PCP mapping; the doctor's lossless "
    "and pause checks on each node), then cables, optics and switch drop counters";

Verdict worse(Verdict a, Verdict b) { return severity(b) > severity(a) ? b : a; }

// The cause of a probe that stopped at `stage`: under traffic (the probe's "ping" and "write"
// stages) or before (resolution, the connection, the QP: every other stage).
std::string stageCause(const std::string& stage, const NodePair& p) {
  if (stage == "ping" || stage == "write") {
    return fmt::format(
        "the connection from {} to {} broke under traffic: loss or a link flap on the path (the "
        "doctor's links and lossless checks on both nodes, the switch ports' logs)",
        p.from, p.to);
  }
  return fmt::format(
      "no RDMA connection from {} to {}: check that both nodes' eth1 share the NAD's VLAN and "
      "subnet, that the switch ports carry the VLAN, and that each node's RDMA device is up "
      "(rdmanet-doctor on {} and on {})",
      p.from, p.to, p.from, p.to);
}

// The growth of the loss counters: "5 (out_of_sequence +3, local_ack_timeout_err +2)".
uint64_t lossGrowth(const ProbeSummary& s, std::string& detail) {
  uint64_t total = 0;
  std::vector<std::string> parts;
  for (const auto& [name, n] : s.counters_delta) {
    const auto m = podnet::metricFor(name);
    if (!m || n == 0) continue;
    if (m->name != "out_of_sequence" && m->name != "sequence_errors" && m->name != "retransmits") {
      continue;
    }
    total += n;
    parts.push_back(fmt::format("{} +{}", name, n));
  }
  detail = fmt::format("{}", fmt::join(parts, ", "));
  return total;
}

void judgeMtu(const ProbeSummary& s, const NodePair& p, const MtuExpectation& from,
              const MtuExpectation& to, std::vector<Problem>& out) {
  const int path = s.path_mtu.value_or(0);
  if (path == 0) return;  // not measured
  const std::string name = pairName(p);
  const int local = s.local_mtu.value_or(0), peer = s.peer_mtu.value_or(0);
  std::optional<int> expected;
  if (from.mtu) expected = from.mtu;
  if (to.mtu) expected = expected ? std::min(*expected, *to.mtu) : *to.mtu;
  if (expected) {
    if (path >= *expected) return;
    Problem pr{.subject = name,
               .check = "mtu",
               .message = fmt::format("the largest packet that crosses {} is {} B, below {} B",
                                      name, path, *expected)};
    if (to.mtu && peer > 0 && peer < *to.mtu) {
      pr.cause = fmt::format(
          "node {}'s eth1 MTU {} is below {} {}: set the VF's MTU (and the PF's) "
          "on {} to the NAD's",
          p.to, peer, to.source, *to.mtu, p.to);
    } else if (from.mtu && local > 0 && local < *from.mtu) {
      pr.cause = fmt::format(
          "node {}'s eth1 MTU {} is below {} {}: set the VF's MTU (and the PF's) "
          "on {} to the NAD's",
          p.from, local, from.source, *from.mtu, p.from);
    } else {
      pr.cause = fmt::format(
          "both ends' eth1 carry {} B but the path between {} and {} does not: a switch port or "
          "a node's uplink (the PF) with a smaller MTU drops the larger frames",
          *expected, p.from, p.to);
    }
    out.push_back(std::move(pr));
    return;
  }
  if (local > 0 && peer > 0 && path < std::min(local, peer)) {
    out.push_back({.subject = name,
                   .check = "mtu",
                   .message = fmt::format(
                       "the largest packet that crosses {} is {} B, below the ends' eth1 MTU {} B",
                       name, path, std::min(local, peer)),
                   .cause = fmt::format(
                       "the path between {} and {} carries less than both ends: a switch port or "
                       "a node's uplink (the PF) with a smaller MTU drops the larger frames",
                       p.from, p.to)});
  }
}

void judgeMeasures(const ProbeSummary& s, const NodePair& p, const Expectations& e,
                   std::vector<Problem>& out) {
  const std::string name = pairName(p);
  if (s.gbps) {
    const double port = s.port_gbps.value_or(0);
    if (port <= 0) {
      out.push_back(
          {.subject = name,
           .check = "bandwidth",
           .verdict = Verdict::kUnknown,
           .message = fmt::format("{:.2f} Gb/s, against an unknown port speed", *s.gbps),
           .cause = fmt::format("{}'s RDMA port reports no rate: bandwidth not judged", p.from)});
    } else if (*s.gbps * 100 < e.bw_percent * port) {
      out.push_back(
          {.subject = name,
           .check = "bandwidth",
           .message = fmt::format("{:.2f} Gb/s is {:.0f}% of the {:.0f} Gb/s port, below {:.0f}%",
                                  *s.gbps, *s.gbps * 100 / port, port, e.bw_percent),
           .cause = fmt::format(
               "the path from {} to {} runs below line rate: a link at a lower speed, pause "
               "frames or congestion on it, or other traffic (the doctor's links and pause "
               "checks on both nodes, the switch ports)",
               p.from, p.to)});
    }
  }
  const bool p99_over = s.rtt_p99_us && *s.rtt_p99_us > e.rtt_p99_max_us;
  const bool p50_over = e.rtt_p50_max_us > 0 && s.rtt_p50_us && *s.rtt_p50_us > e.rtt_p50_max_us;
  if (p99_over || p50_over) {
    out.push_back({.subject = name,
                   .check = "rtt",
                   .message = p99_over ? fmt::format("RTT p99 {:.1f} us is above {:.0f} us",
                                                     *s.rtt_p99_us, e.rtt_p99_max_us)
                                       : fmt::format("RTT p50 {:.1f} us is above {:.0f} us",
                                                     *s.rtt_p50_us, e.rtt_p50_max_us),
                   .cause = fmt::format(
                       "delay on the path between {} and {}: a shaping or delaying qdisc on "
                       "either node's eth1 or uplink (tc qdisc show), a congested switch port, "
                       "or a node too busy to answer",
                       p.from, p.to)});
  }
  if (s.rtt_p50_us && s.rtt_p99_us && *s.rtt_p50_us > 0 &&
      *s.rtt_p99_us / *s.rtt_p50_us > e.rtt_spread_max) {
    out.push_back(
        {.subject = name,
         .check = "rtt spread",
         .verdict = Verdict::kWarn,
         .message = fmt::format("RTT p99/p50 is {:.1f} (p50 {:.1f} us, p99 {:.1f} us), above {:g}",
                                *s.rtt_p99_us / *s.rtt_p50_us, *s.rtt_p50_us, *s.rtt_p99_us,
                                e.rtt_spread_max),
         .cause = fmt::format("jitter on the path between {} and {}: queueing at a congested "
                              "port, a jittering qdisc, or CPU contention on a node",
                              p.from, p.to)});
  }
  if (s.rtts && s.count && *s.rtts < *s.count) {
    out.push_back({.subject = name,
                   .check = "probe",
                   .message = fmt::format("only {} of {} round trips completed", *s.rtts, *s.count),
                   .cause = stageCause("ping", p)});
  }
  std::string detail;
  if (const uint64_t lost = lossGrowth(s, detail); lost > e.loss_max) {
    out.push_back({.subject = name,
                   .check = "loss",
                   .message = fmt::format("{} loss counter events on {}'s port during the run ({})",
                                          lost, p.from, detail),
                   .cause = kLossCause});
  }
  if (s.traffic_class && *s.traffic_class >= 0 && (*s.traffic_class >> 2) != e.dscp) {
    out.push_back(
        {.subject = name,
         .check = "traffic class",
         .message = fmt::format("the connection's traffic class {} carries DSCP {}, not the "
                                "pool's {}",
                                *s.traffic_class, *s.traffic_class >> 2, e.dscp),
         .cause = fmt::format(
             "{}'s RDMA device does not send with the TOS the connection asked for (the "
             "rdma_cm default_roce_tos, or a driver that ignores it): its frames miss the "
             "lossless priority {}",
             p.from, e.priority)});
  }
}

}  // namespace

std::string pairName(const NodePair& p) { return fmt::format("{} -> {}", p.from, p.to); }

void judgePair(PairResult& r, const Expectations& e, const MtuExpectation& from,
               const MtuExpectation& to) {
  r.problems.clear();
  const std::string name = pairName(r.pair);
  if (!r.summary) {
    r.problems.push_back({.subject = name,
                          .check = "probe",
                          .message = r.failure.empty() ? "no result" : r.failure,
                          .cause = fmt::format("the probe pods of {} did not run to the end: see "
                                               "the message (a node without a free device, an "
                                               "image that cannot be pulled, a NAD that fails)",
                                               name)});
  } else {
    const auto& s = *r.summary;
    if (!s.failed_stage.empty()) {
      r.problems.push_back({.subject = name,
                            .check = "probe",
                            .message = fmt::format("the probe failed at \"{}\"{}{}", s.failed_stage,
                                                   s.error.empty() ? "" : ": ", s.error),
                            .cause = stageCause(s.failed_stage, r.pair)});
    }
    // A connection that broke under traffic (ping, write) measured the path until it broke:
    // its round trips, MTU, traffic class and counters say why, so they are judged too (not its
    // bandwidth: the write phase did not finish).
    if (s.failed_stage.empty() || s.failed_stage == "ping" || s.failed_stage == "write") {
      ProbeSummary measured = s;
      if (!s.failed_stage.empty()) measured.gbps.reset();
      judgeMeasures(measured, r.pair, e, r.problems);
      judgeMtu(measured, r.pair, from, to, r.problems);
    }
  }
  r.verdict = Verdict::kPass;
  for (const auto& p : r.problems) r.verdict = worse(r.verdict, p.verdict);
}

std::vector<Problem> nodeProblems(const NodeHealth& n) {
  std::vector<Problem> out;
  const std::string subject = "node " + n.node;
  if (!n.reached) {
    out.push_back({.subject = subject,
                   .check = "checklist",
                   .verdict = Verdict::kUnknown,
                   .message = n.reason,
                   .cause = "the node's checklist and counters could not be read: check rdmanet's "
                            "daemon pod on the node (kubectl get pods -o wide) and its /metrics"});
    return out;
  }
  for (const auto& c : n.checks) {
    if (c.verdict != Verdict::kWarn && c.verdict != Verdict::kFail) continue;
    out.push_back(
        {.subject = subject,
         .check = "checklist",
         .verdict = c.verdict,
         .message = fmt::format("doctor check {}{}{} is {}", c.check,
                                c.device.empty() ? "" : " on ", c.device, verdictName(c.verdict)),
         .cause = fmt::format("run rdmanet-doctor on {} (or `rdmanet-device-plugin doctor` in its "
                              "daemon pod) for the check's evidence and remedy",
                              n.node)});
  }
  return out;
}

std::vector<std::string> likelyNodes(const std::vector<PairResult>& pairs) {
  std::set<std::string> nodes;
  std::map<std::string, std::set<size_t>> by_check;  // check -> the pairs it fails or warns
  for (size_t i = 0; i < pairs.size(); ++i) {
    nodes.insert({pairs[i].pair.from, pairs[i].pair.to});
    for (const auto& p : pairs[i].problems) {
      if (p.verdict == Verdict::kFail || p.verdict == Verdict::kWarn) by_check[p.check].insert(i);
    }
  }
  std::vector<std::string> out;
  if (nodes.size() < 3) return out;
  for (const auto& [check, failing] : by_check) {
    if (failing.size() < 2) continue;  // one pair names no node apart from its other end
    for (const auto& n : nodes) {
      std::set<size_t> through;
      for (size_t i = 0; i < pairs.size(); ++i) {
        if (pairs[i].pair.from == n || pairs[i].pair.to == n) through.insert(i);
      }
      if (through == failing) {
        out.push_back(fmt::format(
            "node {}: every pair through it, and only those, has {} problems ({} pairs)", n, check,
            failing.size()));
      }
    }
  }
  return out;
}

Verdict overallVerdict(const std::vector<NodeHealth>& nodes, const std::vector<PairResult>& pairs) {
  Verdict w = Verdict::kPass;
  for (const auto& n : nodes) w = worse(w, n.checklist());
  for (const auto& p : pairs) w = worse(w, p.verdict);
  return w;
}

}  // namespace rdmanet::doctor::preflight
