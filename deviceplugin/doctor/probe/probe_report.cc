#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "deviceplugin/doctor/cli_flags.h"
#include "deviceplugin/doctor/probe/probe.h"

namespace rdmanet::doctor {

std::string probeUsage() {
  return "usage: rdmanet-doctor probe --listen [--bind ADDR] [--port P] [--device D] [--once]\n"
         "       rdmanet-doctor probe ADDR [--bind ADDR] [--port P] [--device D] [--tos T]\n"
         "                            [--dscp D] [--priority P] [--count N] [--bandwidth]\n"
         "                            [--timeout-ms MS] [--json]\n"
         "RDMA ping-pong (RTT p50/p99) and optional RDMA-write bandwidth (>= 90% of the port\n"
         "rate) over librdmacm and an RC QP, reporting the GID index, traffic class and SL used\n"
         "against the pool's DSCP (default 26) and priority (default 3). Exit 0 PASS, 1 FAIL,\n"
         "2 usage error.\n";
}

Result<ProbeOptions> parseProbeArgs(const std::vector<std::string>& args) {
  ProbeOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (auto eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    auto value = [&]() -> Result<std::string> {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) return usageError(flag + " needs a value");
      return args[++i];
    };
    auto number = [&](int lo, int hi) -> Result<int> {
      RDMANET_ASSIGN_OR_RETURN(std::string v, value());
      return intIn(flag, v, lo, hi);
    };
    const bool is_switch = flag == "--listen" || flag == "--once" || flag == "--bandwidth" ||
                           flag == "--json" || flag == "--help" || flag == "-h";
    if (is_switch && inline_value) return usageError(flag + " takes no value");
    if (flag == "--listen") {
      o.listen = true;
    } else if (flag == "--once") {
      o.once = true;
    } else if (flag == "--bandwidth") {
      o.bandwidth = true;
    } else if (flag == "--json") {
      o.json = true;
    } else if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (flag == "--bind") {
      RDMANET_ASSIGN_OR_RETURN(o.bind, value());
      if (o.bind.empty()) return usageError("--bind needs an address");
    } else if (flag == "--device") {
      RDMANET_ASSIGN_OR_RETURN(o.device, value());
      if (o.device.empty() || o.device.size() >= 64) return usageError("--device: bad name");
    } else if (flag == "--port") {
      RDMANET_ASSIGN_OR_RETURN(o.port, number(1, 65535));
    } else if (flag == "--tos") {
      RDMANET_ASSIGN_OR_RETURN(int t, number(0, 255));
      o.tos = t;
    } else if (flag == "--dscp") {
      RDMANET_ASSIGN_OR_RETURN(o.dscp, number(0, 63));
    } else if (flag == "--priority") {
      RDMANET_ASSIGN_OR_RETURN(o.priority, number(0, 7));
    } else if (flag == "--count") {
      RDMANET_ASSIGN_OR_RETURN(o.count, number(1, 1000000));
    } else if (flag == "--timeout-ms") {
      RDMANET_ASSIGN_OR_RETURN(o.timeout_ms, number(10, 600000));
    } else if (!flag.starts_with("-") && o.peer.empty()) {
      o.peer = flag;
    } else {
      return usageError("unknown argument \"" + args[i] + "\"");
    }
  }
  if (o.help) return o;
  if (o.listen && !o.peer.empty()) return usageError("--listen takes no peer address");
  if (!o.listen && o.peer.empty()) return usageError("give the server's address, or --listen");
  if (!o.listen && o.once) return usageError("--once is for --listen");
  return o;
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
  return j.dump(2) + "\n";
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
  for (const auto& p : r.problems) t += "  -> " + p + "\n";
  return t;
}

}  // namespace rdmanet::doctor
