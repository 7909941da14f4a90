#include "deviceplugin/doctor/preflight/render.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/json/json_dump.h"

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;

std::string utc(int64_t unix_s) {
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<double> spread(const ProbeSummary& s) {
  if (!s.rtt_p50_us || !s.rtt_p99_us || *s.rtt_p50_us <= 0) return std::nullopt;
  return *s.rtt_p99_us / *s.rtt_p50_us;
}

std::optional<double> percentOfPort(const ProbeSummary& s) {
  if (!s.gbps || !s.port_gbps || *s.port_gbps <= 0) return std::nullopt;
  return *s.gbps * 100 / *s.port_gbps;
}

template <typename T>
std::string orDash(const std::optional<T>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

void putIf(json& j, const char* key, const auto& v) {
  if (v) j[key] = *v;
}

}  // namespace

std::string renderPreflightTable(const PreflightReport& r) {
  std::string out = fmt::format("rdmanet pre-flight, run {}: {} nodes, {} pairs\n\n", r.run_id,
                                r.nodes.size(), r.pairs.size());
  out += fmt::format("{:<32} {:<9} {}\n", "NODE", "CHECKLIST", "FAILING CHECKS");
  for (const auto& n : r.nodes) {
    const auto failing = n.failingChecks();
    std::string row =
        fmt::format("{:<32} {:<9} {}", n.node, verdictName(n.checklist()),
                    n.reached ? fmt::format("{}", fmt::join(failing, ", ")) : n.reason);
    out += row.erase(row.find_last_not_of(' ') + 1) + "\n";
  }
  out += fmt::format("\n{:<48} {:>8} {:>6} {:>15} {:>6} {:>14} {:>4} {}\n", "PAIR", "BW Gb/s",
                     "% PORT", "RTT p50/p99 us", "SPREAD", "PATH/RoCE MTU", "TC", "VERDICT");
  for (const auto& p : r.pairs) {
    const ProbeSummary s = p.summary.value_or(ProbeSummary{});
    const std::string rtt = s.rtt_p50_us && s.rtt_p99_us
                                ? fmt::format("{:.1f}/{:.1f}", *s.rtt_p50_us, *s.rtt_p99_us)
                                : "-";
    const std::string mtu = s.path_mtu && *s.path_mtu > 0
                                ? fmt::format("{}/{}", *s.path_mtu, s.roce_mtu.value_or(0))
                                : "-";
    out += fmt::format("{:<48} {:>8} {:>6} {:>15} {:>6} {:>14} {:>4} {}\n", pairName(p.pair),
                       orDash(s.gbps, "{:.2f}"), orDash(percentOfPort(s), "{:.0f}%"), rtt,
                       orDash(spread(s), "{:.1f}"), mtu, orDash(s.traffic_class, "{}"),
                       verdictName(p.verdict));
  }
  const auto problems = r.problems();
  if (!problems.empty()) {
    out += "\nPROBLEMS\n";
    for (const auto& pr : problems) {
      out += fmt::format("{:<7} {} [{}]: {}\n        cause: {}\n", verdictName(pr.verdict),
                         pr.subject, pr.check, pr.message, pr.cause);
    }
  }
  for (const auto& l : r.likely_nodes) out += fmt::format("LIKELY  {}\n", l);
  out += "\n";
  if (!r.baseline) {
    out += "Baseline: not recorded (--no-baseline)\n";
  } else if (!r.baseline->error.empty()) {
    out += fmt::format("Baseline: NOT recorded in ConfigMap {}: {}\n", r.baseline->configmap,
                       r.baseline->error);
  } else {
    out += fmt::format(
        "Baseline: RDMA counters of {} recorded in ConfigMap {} at {} (one key per "
        "node)\n",
        fmt::join(r.baseline->nodes, ", "), r.baseline->configmap, utc(r.baseline->taken_at));
  }
  for (const auto& e : r.cleanup_errors) out += fmt::format("Clean-up: {}\n", e);
  out += fmt::format("Verdict: {}\n", verdictName(r.verdict));
  return out;
}

std::string renderPreflightJson(const PreflightReport& r) {
  json j = {{"v", 1},
            {"run", r.run_id},
            {"verdict", verdictName(r.verdict)},
            {"nodes", json::array()},
            {"pairs", json::array()},
            {"problems", json::array()},
            {"likely_nodes", r.likely_nodes},
            {"baseline", nullptr},
            {"cleanup_errors", r.cleanup_errors}};
  for (const auto& n : r.nodes) {
    json checks = json::array();
    for (const auto& c : n.checks) {
      checks.push_back(
          {{"check", c.check}, {"device", c.device}, {"verdict", verdictName(c.verdict)}});
    }
    j["nodes"].push_back({{"node", n.node},
                          {"checklist", verdictName(n.checklist())},
                          {"failing_checks", n.failingChecks()},
                          {"daemon_pod", n.daemon_pod},
                          {"reason", n.reason},
                          {"checks", checks},
                          {"counters", n.counters}});
  }
  for (const auto& p : r.pairs) {
    json pj = {{"from", p.pair.from},
               {"to", p.pair.to},
               {"verdict", verdictName(p.verdict)},
               {"failure", p.failure},
               {"seconds", std::round(p.seconds * 10) / 10}};
    if (p.summary) {
      const auto& s = *p.summary;
      pj["device"] = s.device;  // the client's RDMA device, as the probe picked it
      putIf(pj, "gbps", s.gbps);
      putIf(pj, "port_gbps", s.port_gbps);
      putIf(pj, "bw_percent", percentOfPort(s));
      putIf(pj, "rtt_p50_us", s.rtt_p50_us);
      putIf(pj, "rtt_p99_us", s.rtt_p99_us);
      putIf(pj, "rtt_spread", spread(s));
      putIf(pj, "path_mtu", s.path_mtu);
      putIf(pj, "roce_mtu", s.roce_mtu);
      putIf(pj, "local_mtu", s.local_mtu);
      putIf(pj, "peer_mtu", s.peer_mtu);
      putIf(pj, "traffic_class", s.traffic_class);
      if (s.traffic_class && *s.traffic_class >= 0) pj["dscp"] = *s.traffic_class >> 2;
      pj["counters_delta"] = s.counters_delta;
      pj["probe_problems"] = s.problems;
      pj["failed_stage"] = s.failed_stage;
      pj["error"] = s.error;
    }
    j["pairs"].push_back(std::move(pj));
  }
  for (const auto& pr : r.problems()) {
    j["problems"].push_back({{"subject", pr.subject},
                             {"check", pr.check},
                             {"verdict", verdictName(pr.verdict)},
                             {"message", pr.message},
                             {"cause", pr.cause}});
  }
  if (r.baseline) {
    j["baseline"] = {{"configmap", r.baseline->configmap},
                     {"taken_at", utc(r.baseline->taken_at)},
                     {"nodes", r.baseline->nodes},
                     {"error", r.baseline->error}};
  }
  return dumpJson(j, 2) + "\n";
}

}  // namespace rdmanet::doctor::preflight
