// Global pause (802.3x link-level flow control), read over ethtool netlink (PauseReader). With
// PFC on a port it must be off: a PAUSE frame stops every traffic class, so one congested queue
// stalls the whole port and the lossy classes lose the isolation PFC gives them. Without PFC,
// pause on is a cruder lossless substitute that head-of-line blocks everything: WARN.
#include <fmt/format.h>

#include <cerrno>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

std::string onOff(bool b) { return b ? "on" : "off"; }

}  // namespace

void checkPause(const DoctorContext& ctx, DoctorReport& out) {
  const std::string prio = std::to_string(ctx.options.lossless_priority);
  for (const auto& p : ctx.ports) {
    if (!isEthernet(p)) continue;
    const std::string& ifname = p.netdev->name;
    const std::optional<bool> pfc = pfcOn(out, p);
    const std::string pfc_text = !pfc ? "unknown" : *pfc ? "on (priority " + prio + ")" : "off";
    const std::string by_hand = fmt::format("check by hand with `ethtool -a {}`", ifname);
    if (!ctx.pause) {
      out.results.push_back(makeResult("pause", p.label, Verdict::kUnknown,
                                       {{"pause", "no ethtool netlink socket"}, {"pfc", pfc_text}},
                                       "cannot read global pause: " + by_hand));
      continue;
    }
    auto r = ctx.pause->pause(ifname);
    if (!r.ok()) {
      const int e = r.error().sys_errno;
      const std::string why = e == ENODEV       ? "port not in this network namespace"
                              : e == EOPNOTSUPP ? "driver reports no pause settings"
                                                : "ethtool netlink: " + r.error().msg;
      out.results.push_back(makeResult("pause", p.label, Verdict::kUnknown,
                                       {{"pause", why}, {"pfc", pfc_text}},
                                       "cannot read global pause: " + by_hand));
      continue;
    }
    std::vector<Evidence> ev = {{"autoneg", onOff(r->autoneg)},
                                {"rx", onOff(r->rx)},
                                {"tx", onOff(r->tx)},
                                {"pfc", pfc_text}};
    const std::string fix = fmt::format("ethtool -A {} autoneg off rx off tx off", ifname);
    if (!r->on()) {
      out.results.push_back(makeResult("pause", p.label, Verdict::kPass, std::move(ev)));
    } else if (pfc.value_or(false)) {
      out.results.push_back(makeResult(
          "pause", p.label, Verdict::kFail, std::move(ev),
          fmt::format("global pause is on a PFC port: turn it off ({}); a PAUSE frame stops every "
                      "class, so one congested queue stalls all traffic and PFC cannot act alone",
                      fix)));
    } else {
      out.results.push_back(makeResult(
          "pause", p.label, Verdict::kWarn, std::move(ev),
          fmt::format("global pause is on: it head-of-line blocks every class; use PFC on "
                      "priority {} instead and turn pause off ({})",
                      prio, fix)));
    }
  }
}

}  // namespace rdmanet::doctor
