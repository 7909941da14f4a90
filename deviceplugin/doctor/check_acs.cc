// ACS: for each NIC-GPU pair within one PCIe switch tree (PIX or PXB), whether ACS P2P
// redirect is on in a bridge between them. With redirect on, the switch sends every
// peer-to-peer request up to the root complex, which silently cuts GPUDirect RDMA bandwidth.
#include <fmt/format.h>

#include <set>

#include "deviceplugin/doctor/acs.h"
#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

// The bridges below the deepest one the two paths share: the downstream ports (and any deeper
// switch ports) that peer traffic enters and leaves through.
std::vector<PciAddress> bridgesBetween(const PciePlacement& a, const PciePlacement& b) {
  size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() &&
         a.bridges[common] == b.bridges[common]) {
    ++common;
  }
  std::set<PciAddress> out(a.bridges.begin() + common, a.bridges.end());
  out.insert(b.bridges.begin() + common, b.bridges.end());
  return {out.begin(), out.end()};
}

}  // namespace

void checkAcs(const DoctorContext& ctx, DoctorReport& out) {
  for (const auto& p : ctx.ports) {
    for (const auto& g : ctx.gpus) {
      const Distance d = classifyDistance(p.nic->placement, g.gpu->placement);
      if (d > Distance::kPxb) continue;  // traffic crosses the root complex anyway
      std::vector<Evidence> ev = {{"distance", std::string(distanceName(d))}};
      std::vector<std::string> redirecting;
      bool unreadable = false;
      for (const auto& br : bridgesBetween(p.nic->placement, g.gpu->placement)) {
        auto acs = readAcs(ctx.sysfs, br);
        if (!acs.ok()) {
          unreadable = true;
          ev.push_back({br.str(), "unreadable: " + acs.error().msg});
        } else if (!acs->has_value()) {
          ev.push_back({br.str(), "no ACS capability"});
        } else {
          const AcsInfo& info = **acs;
          ev.push_back({br.str(), info.describe()});
          if (info.redirects()) redirecting.push_back(br.str());
        }
      }
      Verdict v = Verdict::kPass;
      if (!redirecting.empty()) {
        v = Verdict::kFail;
      } else if (unreadable) {
        v = Verdict::kUnknown;
      }
      std::string remedy =
          redirecting.empty()
              ? std::string(
                    "run as root: the ACS capability is past the 64 config bytes a "
                    "non-root reader gets")
              : fmt::format(
                    "disable ACS P2P redirect on {} (BIOS ACS setting, or at boot "
                    "`setpci -s <bdf> ECAP_ACS+6.w=0`); it routes GPUDirect traffic "
                    "through the root complex (RDMA bandwidth low)",
                    join(redirecting, ","));
      out.results.push_back(
          makeResult("acs", p.label + "<->" + g.label, v, std::move(ev), std::move(remedy)));
    }
  }
}

}  // namespace rdmanet::doctor
