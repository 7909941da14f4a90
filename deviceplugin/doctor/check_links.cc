// Links: every data port is up, and all run at the same speed (the outliers are named).
#include <fmt/format.h>

#include <map>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

struct NodeSpeed {
  int mbps = 0;
  int ports_at = 0;     // ports running at mbps
  int ports_known = 0;  // ports reporting a speed
};

// The speed most ports run at; on a tie the faster one, so the slower ports are the outliers.
NodeSpeed nodeSpeed(const std::vector<DataPort>& ports) {
  std::map<int, int> count;
  NodeSpeed out;
  for (const auto& p : ports) {
    if (p.netdev && p.netdev->speed_mbps) {
      ++count[*p.netdev->speed_mbps];
      ++out.ports_known;
    }
  }
  for (const auto& [speed, n] : count) {
    if (n >= out.ports_at) {
      out.mbps = speed;
      out.ports_at = n;
    }
  }
  return out;
}

}  // namespace

void checkLinks(const DoctorContext& ctx, DoctorReport& out) {
  for (const auto& p : ctx.ports) {
    if (!p.netdev) {
      out.results.push_back(makeResult(
          "link", p.label, Verdict::kUnknown,
          {{"netdev", "none in this netns"}, {"pci", p.nic->pci.address.str()}},
          "the PF has no netdev here: moved into a pod (host-device) or its driver made none"));
      continue;
    }
    const auto& nd = *p.netdev;
    const std::string carrier =
        ctx.sysfs.readOpt("/sys/class/net/" + nd.name + "/carrier").value_or("unknown");
    // Drivers without operstate support report "unknown"; with carrier the link is up.
    const bool up = nd.operstate == "up" || (nd.operstate == "unknown" && carrier == "1");
    out.results.push_back(makeResult(
        "link", p.label, up ? Verdict::kPass : Verdict::kFail,
        {{"operstate", nd.operstate}, {"carrier", carrier}},
        fmt::format("bring {} up (ip link set {} up), then check cable and switch port; a down "
                    "port stalls collectives (NCCL timeouts)",
                    nd.name, nd.name)));
  }

  const NodeSpeed node = nodeSpeed(ctx.ports);
  for (const auto& p : ctx.ports) {
    if (!p.netdev) continue;
    if (!p.netdev->speed_mbps) {
      out.results.push_back(makeResult("link_speed", p.label, Verdict::kUnknown,
                                       {{"speed_mbps", "unknown (link down or not reported)"}},
                                       "bring the link up; the driver reports speed only then"));
      continue;
    }
    const int speed = *p.netdev->speed_mbps;
    const bool ok = speed == node.mbps;
    out.results.push_back(makeResult(
        "link_speed", p.label, ok ? Verdict::kPass : Verdict::kFail,
        {{"speed_mbps", std::to_string(speed)},
         {"node_speed_mbps",
          fmt::format("{} ({} of {} ports)", node.mbps, node.ports_at, node.ports_known)}},
        fmt::format("{} negotiated {} Mb/s, the others {} Mb/s: check cable, transceiver and "
                    "switch port speed; the slowest port caps all-reduce bandwidth",
                    p.label, speed, node.mbps)));
  }
}

}  // namespace rdmanet::doctor
