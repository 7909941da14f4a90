// MTU: at least the expected MTU (jumbo frames, 9000 by default) and the same on every data
// port. RoCE derives its path MTU from the netdev MTU (9000 -> 4096-byte RDMA MTU), so one
// 1500 port drops every QP that uses it to 1024-byte packets. InfiniBand ports are skipped:
// their IPoIB MTU does not set the RDMA MTU (the subnet manager does).
#include <fmt/format.h>

#include <map>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {

void checkMtu(const DoctorContext& ctx, DoctorReport& out) {
  std::map<int, int> count;
  int known = 0;
  for (const auto& p : ctx.ports) {
    if (isEthernet(p)) {
      ++count[p.netdev->mtu];
      ++known;
    }
  }
  // The MTU most ports use; on a tie the larger, so the smaller ports are the outliers.
  int node_mtu = 0, node_n = 0;
  for (const auto& [mtu, n] : count) {
    if (n >= node_n) {
      node_mtu = mtu;
      node_n = n;
    }
  }
  const int want = ctx.options.expect_mtu;
  for (const auto& p : ctx.ports) {
    if (!isEthernet(p)) continue;  // no netdev: the link check already reports it
    const int mtu = p.netdev->mtu;
    std::vector<Evidence> ev = {
        {"mtu", std::to_string(mtu)},
        {"expected_min", std::to_string(want)},
        {"node_mtu", fmt::format("{} ({} of {} ports)", node_mtu, node_n, known)}};
    if (mtu < want) {
      out.results.push_back(makeResult(
          "mtu", p.label, Verdict::kFail, std::move(ev),
          fmt::format("set jumbo frames: ip link set {} mtu {} (and the switch ports); a small MTU "
                      "shrinks the RoCE MTU and cuts bandwidth",
                      p.label, want)));
    } else if (mtu != node_mtu) {
      out.results.push_back(makeResult(
          "mtu", p.label, Verdict::kWarn, std::move(ev),
          fmt::format("use one MTU on every data port (ip link set {} mtu {}); mixed MTUs give "
                      "mixed RoCE path MTUs",
                      p.label, node_mtu)));
    } else {
      out.results.push_back(makeResult("mtu", p.label, Verdict::kPass, std::move(ev)));
    }
  }
}

}  // namespace rdmanet::doctor
