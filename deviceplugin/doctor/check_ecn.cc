// ECN and DCQCN, the rest of the lossless triad: PFC alone makes a fabric lossless by pausing,
// and under incast those pauses spread (congestion trees, PFC storms). ECN marking in the switch
// plus DCQCN at the hosts (the notification point, NP, answers a CE-marked packet with a CNP;
// the reaction point, RP, slows the QP down on a CNP) keeps queues short so PFC stays the last
// resort. Both must be on for the lossless priority.
//
// Where the driver exposes them (checked against the sources):
//   - MLNX_OFED's mlx5_core (out of tree, mlnx-ofa_kernel drivers/net/ethernet/mellanox/mlx5/
//     core/en_sysfs.c, mlx5e_sysfs_create): /sys/class/net/<if>/ecn/roce_rp/enable/<prio> and
//     .../roce_np/enable/<prio> for prio 0..7 ("0" or "1"), .../roce_np/cnp_dscp and
//     .../roce_np/cnp_802p_prio;
//   - upstream mlx5_ib in Debian 12's 6.1 kernel (drivers/infiniband/hw/mlx5/cong.c,
//     mlx5_ib_init_cong_debugfs): debugfs /sys/kernel/debug/mlx5/<pci>/cc_params/ with the
//     DCQCN tunables, among them np_cnp_dscp, np_cnp_prio_mode and np_cnp_prio ("%u\n"), but no
//     per-priority enable: upstream leaves ECN on at the firmware default and has no file that
//     says so. There the enable is UNKNOWN, never PASS.
// No other driver (nor the RDMA or devlink netlink of 6.1) exposes these.
#include <fmt/format.h>

#include <charconv>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

std::optional<int> readInt(const Sysfs& sysfs, const std::string& path) {
  auto s = sysfs.readOpt(path);
  if (!s) return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || p == s->data()) return std::nullopt;
  return v;
}

struct CnpConfig {
  std::optional<int> dscp{};
  std::optional<int> prio{};
  std::optional<int> prio_mode{};  // debugfs only: 1 = the CNP takes the marked packet's priority
  std::string where{};
};

CnpConfig readCnp(const Sysfs& sysfs, const DataPort& p) {
  const std::string np = fmt::format("/sys/class/net/{}/ecn/roce_np", p.netdev->name);
  CnpConfig c{.dscp = readInt(sysfs, np + "/cnp_dscp"),
              .prio = readInt(sysfs, np + "/cnp_802p_prio"),
              .where = np};
  if (c.dscp || c.prio) return c;
  const std::string cc =
      fmt::format("/sys/kernel/debug/mlx5/{}/cc_params", p.nic->pci.address.str());
  return CnpConfig{.dscp = readInt(sysfs, cc + "/np_cnp_dscp"),
                   .prio = readInt(sysfs, cc + "/np_cnp_prio"),
                   .prio_mode = readInt(sysfs, cc + "/np_cnp_prio_mode"),
                   .where = cc};
}

std::string optText(const std::optional<int>& v) { return v ? std::to_string(*v) : "unknown"; }

}  // namespace

void checkEcn(const DoctorContext& ctx, DoctorReport& out) {
  const int prio = ctx.options.lossless_priority;
  for (const auto& p : ctx.ports) {
    if (!isEthernet(p)) continue;
    const std::string ecn = fmt::format("/sys/class/net/{}/ecn", p.netdev->name);
    const auto rp = readInt(ctx.sysfs, fmt::format("{}/roce_rp/enable/{}", ecn, prio));
    const auto np = readInt(ctx.sysfs, fmt::format("{}/roce_np/enable/{}", ecn, prio));
    const std::optional<bool> pfc = pfcOn(out, p);
    const std::string pfc_text = !pfc ? "unknown" : *pfc ? "on" : "off";
    std::vector<Evidence> ev = {{"priority", std::to_string(prio)},
                                {"ecn_rp", optText(rp)},
                                {"ecn_np", optText(np)},
                                {"pfc", pfc_text}};
    const std::string enable =
        fmt::format("echo 1 > {0}/roce_rp/enable/{1}; echo 1 > {0}/roce_np/enable/{1}", ecn, prio);
    if (!rp || !np) {
      ev.push_back({"source", "not exposed: no " + ecn +
                                  " (upstream mlx5 has no per-priority "
                                  "ECN enable; MLNX_OFED's driver adds it)"});
      out.results.push_back(makeResult(
          "ecn", p.label, Verdict::kUnknown, std::move(ev),
          fmt::format("cannot read ECN/DCQCN enable for priority {}: confirm it with the NIC "
                      "vendor's tools (mlxconfig/mlnx_qos, firmware defaults) and ECN marking "
                      "on the switch",
                      prio)));
    } else if (*rp && *np) {
      out.results.push_back(makeResult("ecn", p.label, Verdict::kPass, std::move(ev)));
    } else if (pfc.value_or(false)) {
      out.results.push_back(makeResult(
          "ecn", p.label, Verdict::kFail, std::move(ev),
          fmt::format("PFC without ECN: storms under incast. Enable DCQCN on priority {} ({}) "
                      "and ECN marking on the switch, so congestion slows senders before PFC "
                      "pauses spread",
                      prio, enable)));
    } else {
      out.results.push_back(makeResult(
          "ecn", p.label, Verdict::kWarn, std::move(ev),
          fmt::format("ECN/DCQCN is off on priority {}: RoCE has no congestion control ({})", prio,
                      enable)));
    }

    const CnpConfig cnp = readCnp(ctx.sysfs, p);
    std::vector<Evidence> cev = {{"cnp_dscp", optText(cnp.dscp)},
                                 {"cnp_priority", optText(cnp.prio)}};
    if (cnp.prio_mode) cev.push_back({"cnp_prio_mode", std::to_string(*cnp.prio_mode)});
    const bool known = cnp.dscp && cnp.prio;
    cev.push_back({"source", known ? cnp.where
                                   : "not exposed (no ecn/roce_np, no debugfs "
                                     "mlx5 cc_params: mount debugfs, run as root)"});
    out.results.push_back(makeResult(
        "cnp", p.label, known ? Verdict::kPass : Verdict::kUnknown, std::move(cev),
        "cannot read which priority/DSCP CNPs use: give CNPs their own high priority (DSCP 48, "
        "priority 6 by convention) so congestion notices are not queued behind the data they "
        "report"));
  }
}

}  // namespace rdmanet::doctor
