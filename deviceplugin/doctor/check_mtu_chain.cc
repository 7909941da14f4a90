// The MTU chain of a RoCE path: pod MTU <= VF MTU <= PF MTU (a frame larger than any hop is
// dropped silently, and RoCE has no PMTU discovery), and the RoCE active MTU is the largest the
// netdev MTU allows (the RDMA stack derives it from the netdev MTU, iboe_get_mtu(); a smaller
// one, from a port max_mtu limit or a netdev MTU changed under a running device, cuts every
// message into more packets). VFs count only while their netdev is in this netns: a VF in a pod
// is the pod's MTU, which --pod-mtu stands for.
#include <fmt/format.h>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

void chainOfPort(const DoctorContext& ctx, const DataPort& p, DoctorReport& out) {
  const int pf_mtu = p.netdev->mtu;
  const int pod_mtu = ctx.options.pod_mtu;
  std::vector<std::string> vf_text, problems;
  for (const auto& vf_addr : p.nic->pci.vfs) {
    // The doctor's scan leaves VFs out (doctor.h kScan, so its cost follows the PFs): read
    // just the VFs' netdevs here, one small directory each.
    const NicFunction* vf = ctx.inv.nic(vf_addr);
    const std::vector<Netdev> netdevs = vf ? vf->netdevs : netdevsOf(ctx.sysfs, vf_addr);
    for (const auto& nd : netdevs) {
      vf_text.push_back(fmt::format("{}={}", nd.name, nd.mtu));
      if (nd.mtu > pf_mtu) {
        problems.push_back(
            fmt::format("VF {} MTU {} > PF {} MTU {}", nd.name, nd.mtu, p.label, pf_mtu));
      }
      if (pod_mtu > nd.mtu) {
        problems.push_back(fmt::format("pod MTU {} > VF {} MTU {}", pod_mtu, nd.name, nd.mtu));
      }
    }
  }
  if (pod_mtu > pf_mtu) {
    problems.push_back(fmt::format("pod MTU {} > PF {} MTU {}", pod_mtu, p.label, pf_mtu));
  }
  std::vector<Evidence> ev = {
      {"pf_mtu", std::to_string(pf_mtu)},
      {"vf_mtus", vf_text.empty() ? "none in this netns" : join(vf_text, ",")},
      {"pod_mtu", pod_mtu ? std::to_string(pod_mtu) : "not given"}};
  if (!problems.empty()) ev.push_back({"problems", join(problems, "; ")});
  out.results.push_back(makeResult(
      "mtu_chain", p.label, problems.empty() ? Verdict::kPass : Verdict::kFail, std::move(ev),
      fmt::format("keep pod MTU <= VF MTU <= PF MTU (ip link set {} mtu <n>, the netconf \"mtu\"); "
                  "a hop with a smaller MTU drops the larger RoCE frames silently",
                  p.label)));
}

void roceMtuOfPort(const DataPort& p, DoctorReport& out) {
  for (const auto& port : p.facts.ports) {
    if (port.link_layer != "Ethernet") continue;
    const std::string dev = rdmaPortName(p.rdma->name, port.num);
    const int want = roceMtuForNetdevMtu(p.netdev->mtu, port.max_mtu);
    std::vector<Evidence> ev = {
        {"netdev_mtu", std::to_string(p.netdev->mtu)},
        {"active_mtu", port.active_mtu ? std::to_string(port.active_mtu) : "unknown"},
        {"max_mtu", port.max_mtu ? std::to_string(port.max_mtu) : "unknown"},
        {"expected", std::to_string(want)},
        {"source", p.facts.source == FactSource::kVerbs
                       ? "verbs"
                       : "sysfs (" + p.facts.fallback_reason + "); sysfs has no active MTU"}};
    if (port.active_mtu == 0) {
      out.results.push_back(makeResult(
          "roce_mtu", dev, Verdict::kUnknown, std::move(ev),
          fmt::format("cannot read the RoCE active MTU without verbs: run as root on the host "
                      "(ibv_devinfo -d {} shows active_mtu)",
                      p.rdma->name)));
      continue;
    }
    const bool ok = port.active_mtu == want;
    out.results.push_back(makeResult(
        "roce_mtu", dev, ok ? Verdict::kPass : Verdict::kFail, std::move(ev),
        fmt::format("RoCE active MTU {} is not the {} that netdev MTU {} allows: check the port's "
                    "max MTU and re-set the netdev MTU (ip link set {} mtu {})",
                    port.active_mtu, want, p.netdev->mtu, p.label, p.netdev->mtu)));
  }
}

}  // namespace

void checkMtuChain(const DoctorContext& ctx, DoctorReport& out) {
  for (const auto& p : ctx.ports) {
    if (!isEthernet(p)) continue;
    chainOfPort(ctx, p, out);
    if (p.rdma) roceMtuOfPort(p, out);
  }
}

}  // namespace rdmanet::doctor
