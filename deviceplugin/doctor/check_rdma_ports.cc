// RDMA ports: what `ibstatus` shows (state ACTIVE, physical state LinkUp) and what
// `ibdev2netdev` shows (each RDMA port maps to the netdev of its PCI function). State, link
// layer, rate and GIDs come from the port facts (verbs when the device opens, else sysfs; the
// "source" evidence says which); the physical state only sysfs has.
#include <fmt/format.h>

#include <set>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

std::string stateText(int num, const std::string& name) {
  if (name.empty()) return "unknown";
  return fmt::format("{}: {}", num, name);
}

std::string sourceText(const DeviceFacts& f) {
  if (f.source == FactSource::kVerbs) return "verbs";
  return fmt::format("sysfs ({})",
                     f.fallback_reason.empty() ? "verbs not tried" : f.fallback_reason);
}

void checkPort(const DataPort& p, const RdmaPort& sys, const PortFacts& port, DoctorReport& out) {
  const std::string dev = rdmaPortName(p.rdma->name, port.num);
  const bool active = port.state == "ACTIVE" && sys.phys_state == "LinkUp";
  int roce_v2 = 0;
  for (const auto& g : port.gids) roce_v2 += g.type == GidType::kRoceV2 ? 1 : 0;
  std::vector<Evidence> ev = {{"state", stateText(port.state_num, port.state)},
                              {"phys_state", stateText(sys.phys_state_num, sys.phys_state)},
                              {"link_layer", port.link_layer.empty() ? "unknown" : port.link_layer},
                              {"source", sourceText(p.facts)}};
  if (!port.rate.empty()) ev.push_back({"rate", port.rate});
  if (port.active_mtu > 0) ev.push_back({"active_mtu", std::to_string(port.active_mtu)});
  Verdict v = active ? Verdict::kPass : Verdict::kFail;
  std::string remedy = fmt::format(
      "{} is not ACTIVE/LinkUp: check the cable and switch port, then `ip link set {} up`; a "
      "port that is not ACTIVE fails every QP (NCCL timeouts)",
      dev, p.netdev ? p.netdev->name : "<netdev>");
  if (port.link_layer == "Ethernet") {
    ev.push_back({"roce_v2_gids", std::to_string(roce_v2)});
    if (active && roce_v2 == 0) {
      v = Verdict::kWarn;
      remedy =
          "no RoCE v2 GID on an Ethernet port: RoCE v2 traffic cannot be addressed; check "
          "that the netdev exists and has an IPv6 link-local or IP address";
    }
  }
  out.results.push_back(makeResult("rdma_port", dev, v, std::move(ev), std::move(remedy)));
}

// ibdev2netdev: the netdev of the same PCI function, and the netdevs the GID table names.
void checkNetdevMapping(const DataPort& p, const PortFacts& port, DoctorReport& out) {
  std::set<std::string> gid_ndevs;
  for (const auto& g : port.gids) {
    if (!g.ndev.empty()) gid_ndevs.insert(g.ndev);
  }
  const std::string netdev = p.netdev ? p.netdev->name : "";
  std::vector<Evidence> map_ev = {
      {"mapping", netdev.empty() ? fmt::format("{} port {} ==> (none)", p.rdma->name, port.num)
                                 : fmt::format("{} port {} ==> {} ({})", p.rdma->name, port.num,
                                               netdev, p.netdev->operstate)}};
  if (!gid_ndevs.empty()) {
    map_ev.push_back({"gid_ndevs", join({gid_ndevs.begin(), gid_ndevs.end()}, ",")});
  }
  const bool mapped = !netdev.empty() || !gid_ndevs.empty();
  out.results.push_back(makeResult(
      "ibdev2netdev", rdmaPortName(p.rdma->name, port.num),
      mapped ? Verdict::kPass : Verdict::kFail, std::move(map_ev),
      "the RDMA device has no netdev: NCCL cannot match it to an interface (NCCL_SOCKET_IFNAME, "
      "RoCE GIDs); reload mlx5_core or check that the netdev was not moved to another netns"));
}

}  // namespace

void checkRdmaPorts(const DoctorContext& ctx, DoctorReport& out) {
  for (const auto& p : ctx.ports) {
    if (!p.rdma) {
      out.results.push_back(makeResult(
          "rdma_port", p.label, Verdict::kFail,
          {{"rdma_device", "none"},
           {"pci", p.nic->pci.address.str()},
           {"driver", p.nic->pci.driver.empty() ? "none" : p.nic->pci.driver}},
          "no RDMA device on this RDMA NIC port: load the RDMA driver (modprobe mlx5_ib) and "
          "install rdma-core"));
      continue;
    }
    if (p.rdma->ports.empty()) {
      out.results.push_back(makeResult("rdma_port", p.rdma->name, Verdict::kUnknown,
                                       {{"ports", "none listed"}},
                                       "the RDMA device lists no ports: check the driver"));
      continue;
    }
    for (const auto& sys : p.rdma->ports) {
      const PortFacts* facts = nullptr;
      for (const auto& f : p.facts.ports) {
        if (f.num == sys.num) facts = &f;
      }
      // A port sysfs lists but verbs does not (should not happen): judge it on sysfs alone.
      PortFacts fallback;
      if (!facts) {
        RdmaDevice one = *p.rdma;
        one.ports = {sys};
        fallback = factsFromSysfs(ctx.sysfs, one).ports.front();
      }
      const PortFacts& port = facts ? *facts : fallback;
      checkPort(p, sys, port, out);
      checkNetdevMapping(p, port, out);
    }
  }
}

}  // namespace rdmanet::doctor
