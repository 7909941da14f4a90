// `hack/simnode show`: the inventory of a (simulated or real) sysfs root as readable tables.

#include <fmt/format.h>

#include "common/inventory/node.h"
#include "tests/simnode/simnode_cli.h"

namespace rdmanet::sim {
namespace {

std::string kindOf(const PciFunction& f) {
  if (f.isVf()) return f.vf_index ? fmt::format("VF{}", *f.vf_index) : "VF";
  return f.isPf() ? "PF" : "NIC";
}

std::string portState(const NicFunction& n) {
  if (n.rdma.empty() || n.rdma[0].ports.empty()) return "-";
  return n.rdma[0].ports[0].state;
}

}  // namespace

int simnodeShow(const std::filesystem::path& root, std::ostream& out) {
  const Sysfs sysfs(root);
  const NodeInventory inv = scanNode(sysfs);
  out << fmt::format("Node inventory of {} ({} NIC functions, {} GPUs)\n\n", root.string(),
                     inv.nics.size(), inv.gpus.size());
  const auto row = "{:<13} {:<5} {:<10} {:<10} {:>4}  {:<15} {:>7}  {:<17}  {:<5} {:<8} {:<7} {}\n";
  out << fmt::format(fmt::runtime(row), "PCI", "KIND", "ID", "DRIVER", "NUMA", "NETDEV", "IFINDEX",
                     "MAC", "OPER", "RDMA", "PORT", "NEAREST GPU");
  for (const auto& n : inv.nics) {
    const Netdev* nd = n.netdevs.empty() ? nullptr : &n.netdevs[0];
    auto near = inv.nearest_gpu.find(n.pci.address);
    out << fmt::format(
        fmt::runtime(row), n.pci.address.str(), kindOf(n.pci), n.pci.vendor + ":" + n.pci.device,
        n.pci.driver.empty() ? "-" : n.pci.driver, n.pci.numa_node, nd ? nd->name : "-",
        nd ? std::to_string(nd->ifindex) : "-", nd ? nd->mac : "-", nd ? nd->operstate : "-",
        n.rdma.empty() ? "-" : n.rdma[0].name, portState(n),
        near == inv.nearest_gpu.end() ? "-" : std::string(distanceName(near->second)));
  }

  out << "\nGPUs\n";
  for (size_t i = 0; i < inv.gpus.size(); ++i) {
    const auto& g = inv.gpus[i];
    out << fmt::format("  GPU{}  {}  {}:{}  numa {}  root {}\n", i, g.pci.address.str(),
                       g.pci.vendor, g.pci.device, g.pci.numa_node, g.placement.root_complex);
  }
  if (inv.gpus.empty()) return 0;

  // Like `nvidia-smi topo -m`, for the NIC physical functions.
  out << "\nNIC-GPU distance (PF rows)\n" << fmt::format("  {:<15}", "");
  for (size_t i = 0; i < inv.gpus.size(); ++i)
    out << fmt::format(" {:<5}", fmt::format("GPU{}", i));
  out << "\n";
  for (const auto& n : inv.nics) {
    if (n.pci.isVf()) continue;
    out << fmt::format("  {:<15}", n.netdevs.empty() ? n.pci.address.str() : n.netdevs[0].name);
    for (const auto& g : inv.gpus) {
      out << fmt::format(" {:<5}", distanceName(classifyDistance(n.placement, g.placement)));
    }
    out << "\n";
  }
  return 0;
}

}  // namespace rdmanet::sim
