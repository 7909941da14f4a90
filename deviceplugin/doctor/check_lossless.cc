// Lossless Ethernet (DCB, read over rtnetlink RTM_GETDCB): PFC on the lossless priority, the
// same trust mode (pcp or dscp) on every port, and with trust dscp a DSCP -> priority map that
// sends some DSCP to the lossless priority. Whatever the doctor cannot read is UNKNOWN: a port
// without DCB data has not been shown to be lossless. InfiniBand ports are skipped: the link
// layer is lossless by credit-based flow control.
#include <fmt/format.h>

#include <cerrno>
#include <map>
#include <optional>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

std::string trustName(TrustMode t) { return t == TrustMode::kDscp ? "dscp" : "pcp"; }

std::string priorities(uint8_t mask) {
  std::vector<std::string> on;
  for (int p = 0; p < 8; ++p) {
    if ((mask >> p) & 1) on.push_back(std::to_string(p));
  }
  return on.empty() ? "none" : join(on, ",");
}

// "3:24,26 5:46": every priority the APP table maps DSCPs to.
std::string dscpMap(const DcbState& s) {
  std::vector<std::string> parts;
  for (int p = 0; p < 8; ++p) {
    std::vector<std::string> d;
    for (uint8_t v : s.dscpsFor(p)) d.push_back(std::to_string(v));
    if (!d.empty()) parts.push_back(fmt::format("{}:{}", p, join(d, ",")));
  }
  return parts.empty() ? "empty" : join(parts, " ");
}

}  // namespace

void checkLossless(const DoctorContext& ctx, DoctorReport& out) {
  const int prio = ctx.options.lossless_priority;
  const std::string prio_s = std::to_string(prio);
  struct Read {
    const DataPort* port;
    DcbState dcb;
  };
  std::vector<Read> readable;
  for (const auto& p : ctx.ports) {
    if (!isEthernet(p)) continue;
    const std::string& ifname = p.netdev->name;
    std::optional<std::string> why;
    DcbState state;
    if (!ctx.netlink) {
      why = "no netlink socket";
    } else if (auto r = ctx.netlink->dcb(ifname); !r.ok()) {
      why = r.error().sys_errno == ENODEV ? "port not in this network namespace"
                                          : "netlink: " + r.error().msg;
    } else if (!r->supported) {
      why = "driver does not report DCB (no IEEE DCB attributes)";
    } else {
      state = *r;
    }
    if (why) {
      out.results.push_back(makeResult(
          "pfc", p.label, Verdict::kUnknown, {{"priority", prio_s}, {"dcb", *why}},
          "cannot read DCB: run on the host (host netns, root) with a DCB-capable driver; check "
          "PFC by hand with `dcb pfc show dev " +
              ifname + "`"));
      continue;
    }
    const bool on = state.pfcOn(prio);
    out.results.push_back(makeResult(
        "pfc", p.label, on ? Verdict::kPass : Verdict::kFail,
        {{"priority", prio_s}, {"pfc_enabled", priorities(state.pfc_enabled)}},
        fmt::format("enable PFC on priority {} (dcb pfc set dev {} prio-pfc {}:on, or mlnx_qos "
                    "--pfc); without it RoCE drops packets under load: NCCL timeouts, P99 spikes",
                    prio, ifname, prio)));
    readable.push_back({&p, std::move(state)});
  }

  // Trust: the mode most ports use is the node's; the others are the outliers.
  std::map<TrustMode, int> count;
  for (const auto& r : readable) ++count[r.dcb.trust()];
  TrustMode node_trust = TrustMode::kPcp;
  int node_n = 0;
  for (const auto& [t, n] : count) {
    if (n > node_n) {
      node_trust = t;
      node_n = n;
    }
  }
  for (const auto& r : readable) {
    const TrustMode t = r.dcb.trust();
    out.results.push_back(makeResult(
        "trust", r.port->label, t == node_trust ? Verdict::kPass : Verdict::kFail,
        {{"trust", trustName(t)},
         {"node_trust",
          fmt::format("{} ({} of {} ports)", trustName(node_trust), node_n, readable.size())}},
        fmt::format("use one trust mode on every port (mlnx_qos -i {} --trust {}); with mixed "
                    "modes traffic lands in the lossless class on some ports only",
                    r.port->label, trustName(node_trust))));
    if (t != TrustMode::kDscp) continue;
    const auto dscps = r.dcb.dscpsFor(prio);
    std::vector<std::string> d;
    d.reserve(dscps.size());
    for (uint8_t v : dscps) d.push_back(std::to_string(v));
    out.results.push_back(makeResult(
        "dscp_map", r.port->label, dscps.empty() ? Verdict::kFail : Verdict::kPass,
        {{"priority", prio_s},
         {"dscp_to_priority", d.empty() ? "none" : join(d, ",")},
         {"map", dscpMap(r.dcb)}},
        fmt::format("map the RoCE DSCP (26 by default) to priority {} (dcb app add dev {} "
                    "dscp-prio 26:{}); otherwise RoCE traffic is not in the lossless class",
                    prio, r.port->label, prio)));
  }
}

}  // namespace rdmanet::doctor
