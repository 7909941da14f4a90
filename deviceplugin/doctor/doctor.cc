#include "deviceplugin/doctor/doctor.h"

#include <fmt/format.h>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

constexpr const char* kMellanoxVendor = "15b3";

bool isDataPort(const NicFunction& n) {
  if (n.pci.isVf()) return false;
  return !n.rdma.empty() || n.pci.vendor == kMellanoxVendor;
}

}  // namespace

std::string rdmaPortName(const std::string& rdma_device, int port) {
  return fmt::format("{}/{}", rdma_device, port);
}

CheckResult makeResult(std::string check, std::string device, Verdict v,
                       std::vector<Evidence> evidence, std::string remedy) {
  return CheckResult{.check = std::move(check),
                     .device = std::move(device),
                     .verdict = v,
                     .evidence = std::move(evidence),
                     .remedy = v == Verdict::kPass ? std::string() : std::move(remedy)};
}

std::optional<bool> pfcOn(const DoctorReport& out, const DataPort& p) {
  const CheckResult* r = out.find("pfc", p.label);
  if (!r || r->verdict == Verdict::kUnknown) return std::nullopt;
  return r->verdict == Verdict::kPass;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

void collectDevices(const NodeInventory& inv, std::vector<DataPort>& ports,
                    std::vector<GpuRef>& gpus) {
  ports.clear();
  gpus.clear();
  for (const auto& n : inv.nics) {
    if (!isDataPort(n)) continue;
    DataPort p{.nic = &n,
               .netdev = n.netdevs.empty() ? nullptr : &n.netdevs.front(),
               .rdma = n.rdma.empty() ? nullptr : &n.rdma.front()};
    p.label = p.netdev ? p.netdev->name : n.pci.address.str();
    p.rdma_label = p.rdma ? p.rdma->name : p.label;
    ports.push_back(std::move(p));
  }
  // scanNode lists GPUs by address already; number them in that order, like nvidia-smi with
  // CUDA_DEVICE_ORDER=PCI_BUS_ID.
  for (size_t i = 0; i < inv.gpus.size(); ++i) {
    gpus.push_back(GpuRef{.gpu = &inv.gpus[i], .label = fmt::format("GPU{}", i)});
  }
}

DoctorReport runDoctor(const DoctorInputs& in, const NodeInventory& inv) {
  DoctorContext ctx{.sysfs = in.sysfs,
                    .inv = inv,
                    .options = in.options,
                    .netlink = in.netlink,
                    .verbs = in.verbs,
                    .pause = in.pause,
                    .baseline = in.baseline,
                    .now_unix = in.now_unix};
  const auto cancelled = [&] { return in.cancel != nullptr && in.cancel->load(); };
  collectDevices(inv, ctx.ports, ctx.gpus);
  for (auto& p : ctx.ports) {
    if (cancelled()) return {};
    if (p.rdma) p.facts = rdmaFacts(in.verbs, in.sysfs, *p.rdma);
  }
  DoctorReport out;
  // In this order: the pause and ECN checks read the "pfc" results checkLossless appended.
  for (auto* check :
       {checkLinks, checkRdmaPorts, checkMtu, checkMtuChain, checkLossless, checkPause, checkEcn,
        checkNuma, checkTopology, checkAcs, checkGpuDirect, checkCpu, checkCounters}) {
    if (cancelled()) return out;
    check(ctx, out);
  }
  return out;
}

DoctorReport runDoctor(const DoctorInputs& in) { return runDoctor(in, scanNode(in.sysfs, kScan)); }

}  // namespace rdmanet::doctor
