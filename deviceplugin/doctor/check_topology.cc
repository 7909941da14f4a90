// Topology: the NIC x GPU distance matrix (`nvidia-smi topo -m` classes), and per GPU whether
// its nearest RDMA NIC is close enough for GPUDirect RDMA to pay off (same PCIe switch or
// switch tree: PIX or PXB), as NCCL assumes by default.
#include <fmt/format.h>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {

void checkTopology(const DoctorContext& ctx, DoctorReport& out) {
  DistanceMatrix& m = out.matrix;
  m = DistanceMatrix{};
  for (const auto& p : ctx.ports) {
    m.nics.push_back(DistanceMatrix::Nic{.label = p.rdma_label,
                                         .netdev = p.netdev ? p.netdev->name : "",
                                         .pci = p.nic->pci.address.str(),
                                         .numa_node = p.nic->pci.numa_node,
                                         .pcie_root = p.nic->placement.root_complex});
  }
  for (const auto& g : ctx.gpus) {
    m.gpus.push_back(DistanceMatrix::Gpu{.label = g.label,
                                         .pci = g.gpu->pci.address.str(),
                                         .numa_node = g.gpu->pci.numa_node,
                                         .pcie_root = g.gpu->placement.root_complex});
  }
  for (const auto& p : ctx.ports) {
    auto& row = m.cells.emplace_back();
    for (const auto& g : ctx.gpus) {
      row.push_back(classifyDistance(p.nic->placement, g.gpu->placement));
    }
  }

  for (size_t j = 0; j < ctx.gpus.size(); ++j) {
    const auto& g = ctx.gpus[j];
    if (ctx.ports.empty()) {
      out.results.push_back(makeResult("topology", g.label, Verdict::kWarn,
                                       {{"nearest_nic", "none"}}, "no RDMA NIC on this node"));
      continue;
    }
    size_t best = 0;
    for (size_t i = 1; i < ctx.ports.size(); ++i) {
      if (m.cells[i][j] < m.cells[best][j]) best = i;
    }
    const Distance d = m.cells[best][j];
    const bool close = d <= Distance::kPxb;
    out.results.push_back(makeResult(
        "topology", g.label, close ? Verdict::kPass : Verdict::kWarn,
        {{"nearest_nic", ctx.ports[best].rdma_label}, {"distance", std::string(distanceName(d))}},
        fmt::format("no RDMA NIC under {}'s PCIe switch ({} at best): GPUDirect RDMA goes "
                    "through the CPU root complex; pin the rank to its nearest NIC "
                    "(NCCL_IB_HCA) or move cards",
                    g.label, distanceName(d))));
  }
}

}  // namespace rdmanet::doctor
