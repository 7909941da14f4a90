#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/json/json_dump.h"
#include "deviceplugin/doctor/probe/probe.h"

namespace rdmanet::doctor {

ProbeReport clientReport(const ProbeOptions& o) {
  return ProbeReport{.peer = o.peer,
                     .expected_dscp = o.dscp,
                     .expected_priority = o.priority,
                     .requested_tos = o.effectiveTos(),
                     .count = o.count};
}

double percentile(std::vector<double> s, double p) {
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(s.size())));
  return s[std::clamp<size_t>(rank, 1, s.size()) - 1];
}

void judgeProbe(ProbeReport& r) {
  r.problems.clear();
  if (!r.failed_stage.empty()) {
    r.problems.push_back(fmt::format("{} failed: {}", r.failed_stage, r.error));
  } else if (static_cast<int>(r.rtt_us.size()) < r.count) {
    r.problems.push_back(
        fmt::format("only {} of {} ping-pongs completed", r.rtt_us.size(), r.count));
  }
  if (r.traffic_class >= 0 && (r.traffic_class >> 2) != r.expected_dscp) {
    r.problems.push_back(fmt::format(
        "traffic class {} carries DSCP {}, not the pool's DSCP {}: the traffic misses the lossless "
        "class (set the TOS to {}, e.g. cma_roce_tos or NCCL_IB_TC)",
        r.traffic_class, r.traffic_class >> 2, r.expected_dscp, r.expected_dscp << 2));
  }
  if (r.bandwidth_run && r.failed_stage.empty() && r.port_gbps > 0 &&
      r.gbps < kBandwidthThreshold * r.port_gbps) {
    r.problems.push_back(
        fmt::format("RDMA write {:.2f} Gbit/s is below 90% of the port's {:g} "
                    "Gbit/s",
                    r.gbps, r.port_gbps));
  }
  if (r.local_mtu > 0 && r.peer_mtu > 0 && r.local_mtu != r.peer_mtu) {
    r.problems.push_back(fmt::format(
        "the ends' interface MTUs differ ({} here, {} at the peer): packets sized for the larger "
        "are dropped at the smaller; give both the NAD's MTU",
        r.local_mtu, r.peer_mtu));
  }
  if (r.mtu_run && r.failed_stage.empty()) {
    const int ends = std::min(r.local_mtu > 0 ? r.local_mtu : INT32_MAX,
                              r.peer_mtu > 0 ? r.peer_mtu : INT32_MAX);
    if (r.path_mtu == 0) {
      r.problems.push_back("no UDP packet crossed to the peer's echo and back (a firewall?)");
    } else if (ends != INT32_MAX && r.path_mtu < ends) {
      r.problems.push_back(fmt::format(
          "only {}-byte packets cross, though both ends' interfaces take {}: a link or switch port "
          "between them has a lower MTU",
          r.path_mtu, ends));
    }
  }
  r.pass = r.problems.empty();
}

std::string renderProbeJson(const ProbeReport& r) {
  nlohmann::json j = {
      {"verdict", r.pass ? "PASS" : "FAIL"},
      {"peer", r.peer},
      {"device", r.device},
      {"port", r.port_num},
      {"gid_index", r.gid_index},
      {"gid", r.gid},
      {"traffic_class", r.traffic_class},
      {"dscp", r.traffic_class >= 0 ? r.traffic_class >> 2 : -1},
      {"sl", r.sl},
      {"requested_tos", r.requested_tos},
      {"expected", {{"dscp", r.expected_dscp}, {"priority", r.expected_priority}}},
      {"dscp_match", r.traffic_class >= 0 && (r.traffic_class >> 2) == r.expected_dscp},
      {"sl_match", r.sl == r.expected_priority},
      {"rtt_us",
       {{"count", r.rtt_us.size()},
        {"p50", percentile(r.rtt_us, 50)},
        {"p99", percentile(r.rtt_us, 99)}}},
      {"problems", r.problems},
  };
  if (r.bandwidth_run) {
    j["bandwidth"] = {{"gbps", r.gbps},
                      {"port_gbps", r.port_gbps},
                      {"bytes", r.bytes},
                      {"threshold", kBandwidthThreshold},
                      {"ratio", r.port_gbps > 0 ? r.gbps / r.port_gbps : 0}};
  }
  if (!r.failed_stage.empty()) j["failed"] = {{"stage", r.failed_stage}, {"error", r.error}};
  if (r.local_mtu > 0 || r.mtu_run) {
    j["mtu"] = {
        {"local", r.local_mtu}, {"peer", r.peer_mtu}, {"path", r.path_mtu}, {"roce", r.roce_mtu}};
  }
  if (!r.counters_delta.empty()) j["counters_delta"] = r.counters_delta;
  return dumpJson(j, 2) + "\n";
}

std::string renderProbeSummary(const ProbeReport& r) {
  nlohmann::json j = {
      {"v", 1},
      {"pass", r.pass},
      {"problems", r.problems},
      {"failed_stage", r.failed_stage},
      {"error", r.error},
      {"device", r.device},
      {"gid_index", r.gid_index},
      {"traffic_class", r.traffic_class},
      {"sl", r.sl},
      {"rtt_p50_us", percentile(r.rtt_us, 50)},
      {"rtt_p99_us", percentile(r.rtt_us, 99)},
      {"rtt_max_us", percentile(r.rtt_us, 100)},
      {"rtts", r.rtt_us.size()},
      {"count", r.count},
      {"gbps", r.gbps},
      {"port_gbps", r.port_gbps},
      {"local_mtu", r.local_mtu},
      {"peer_mtu", r.peer_mtu},
      {"path_mtu", r.path_mtu},
      {"roce_mtu", r.roce_mtu},
      {"counters_delta", r.counters_delta},
  };
  // Kubelet keeps 4 KiB of a termination message: shed the open-ended parts until it fits,
  // counters first (the pre-flight reads the node's own), then the problems' wording.
  std::string out = dumpJson(j);
  while (out.size() > kSummaryMaxBytes && !j["counters_delta"].empty()) {
    j["counters_delta"].erase(std::prev(j["counters_delta"].end()));
    out = dumpJson(j);
  }
  while (out.size() > kSummaryMaxBytes && !j["problems"].empty()) {
    j["problems"].erase(std::prev(j["problems"].end()));
    out = dumpJson(j);
  }
  if (out.size() > kSummaryMaxBytes) {
    j["error"] = j["error"].get<std::string>().substr(0, 512);
    out = dumpJson(j);
  }
  return out;
}

std::string renderProbeTable(const ProbeReport& r) {
  std::string t =
      fmt::format("probe {} via {} port {}: {}\n", r.peer, r.device.empty() ? "?" : r.device,
                  r.port_num, r.pass ? "PASS" : "FAIL");
  t += fmt::format("  gid index      {} ({})\n", r.gid_index, r.gid.empty() ? "?" : r.gid);
  if (r.traffic_class < 0) {
    t += fmt::format("  traffic class  unknown (pool DSCP {})\n", r.expected_dscp);
  } else {
    t += fmt::format("  traffic class  {} (DSCP {}; pool DSCP {}{})\n", r.traffic_class,
                     r.traffic_class >> 2, r.expected_dscp,
                     (r.traffic_class >> 2) == r.expected_dscp ? ", match" : ", MISMATCH");
  }
  t += fmt::format("  service level  {} (pool priority {}{})\n", r.sl, r.expected_priority,
                   r.sl == r.expected_priority ? ", match"
                                               : "; the wire priority comes from the VLAN QoS "
                                                 "or DSCP trust");
  t += fmt::format("  rtt            p50 {:.1f} us, p99 {:.1f} us ({} of {})\n",
                   percentile(r.rtt_us, 50), percentile(r.rtt_us, 99), r.rtt_us.size(), r.count);
  if (r.bandwidth_run) {
    t += fmt::format("  rdma write     {:.3f} Gbit/s of {:g} ({:.1f}%, need 90%)\n", r.gbps,
                     r.port_gbps, r.port_gbps > 0 ? 100 * r.gbps / r.port_gbps : 0.0);
  }
  if (r.local_mtu > 0 || r.mtu_run) {
    t += fmt::format("  mtu            here {}, peer {}, path {} (RoCE {})\n", r.local_mtu,
                     r.peer_mtu, r.path_mtu, r.roce_mtu);
  }
  for (const auto& p : r.problems) t += "  -> " + p + "\n";
  return t;
}

}  // namespace rdmanet::doctor
