// NUMA: every GPU has an RDMA NIC on its own NUMA node. Otherwise its rank's network traffic
// crosses the socket interconnect, and NCCL disables GPUDirect RDMA for that pair by default.
#include <fmt/format.h>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {

void checkNuma(const DoctorContext& ctx, DoctorReport& out) {
  for (const auto& g : ctx.gpus) {
    const int node = g.gpu->pci.numa_node;
    std::vector<Evidence> ev = {{"pci", g.gpu->pci.address.str()},
                                {"numa_node", std::to_string(node)}};
    if (node < 0) {
      out.results.push_back(makeResult(
          "numa", g.label, Verdict::kUnknown, std::move(ev),
          "the platform reports no NUMA node for this GPU (numa_node -1): check BIOS NUMA/SRAT "
          "settings"));
      continue;
    }
    std::vector<std::string> local;
    for (const auto& p : ctx.ports) {
      if (p.nic->pci.numa_node == node) local.push_back(p.rdma_label);
    }
    ev.push_back({"local_nics", local.empty() ? "none" : join(local, ",")});
    out.results.push_back(makeResult(
        "numa", g.label, local.empty() ? Verdict::kWarn : Verdict::kPass, std::move(ev),
        fmt::format("no RDMA NIC on NUMA node {}: {} traffic crosses sockets (RDMA bandwidth "
                    "low); add a NIC on that socket or keep that GPU's rank off the network path",
                    node, g.label)));
  }
}

}  // namespace rdmanet::doctor
