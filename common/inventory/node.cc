#include "common/inventory/node.h"

#include <algorithm>
#include <map>

namespace rdmanet {

const NicFunction* NodeInventory::nic(const PciAddress& a) const {
  auto it = std::find_if(nics.begin(), nics.end(),
                         [&](const NicFunction& n) { return n.pci.address == a; });
  return it == nics.end() ? nullptr : &*it;
}

bool isGpu(const PciFunction& f) { return f.vendor == "10de" && (f.class_code >> 16) == 0x03; }

NodeInventory scanNode(const Sysfs& sysfs) {
  NodeInventory inv;
  for (const auto& addr : listPciFunctions(sysfs)) {
    auto fn = readPciFunction(sysfs, addr);
    if (!fn.ok()) continue;  // vanished between listing and reading
    const bool nic = fn->isNetwork();
    if (!nic && !isGpu(*fn)) continue;
    // A function whose place cannot be read still counts; it is just SYS from everything.
    PciePlacement fallback;
    fallback.address = addr;
    fallback.numa_node = fn->numa_node;
    PciePlacement placement = readPlacement(sysfs, addr).valueOr(fallback);
    if (nic) {
      inv.nics.push_back(NicFunction{.pci = std::move(fn).value(),
                                     .placement = std::move(placement),
                                     .netdevs = netdevsOf(sysfs, addr),
                                     .rdma = rdmaDevicesOf(sysfs, addr)});
    } else {
      inv.gpus.push_back(
          GpuFunction{.pci = std::move(fn).value(), .placement = std::move(placement)});
    }
  }
  for (const auto& n : inv.nics) {
    for (const auto& g : inv.gpus) {
      const Distance d = classifyDistance(n.placement, g.placement);
      auto [it, inserted] = inv.nearest_gpu.emplace(n.pci.address, d);
      if (!inserted && d < it->second) it->second = d;
    }
  }
  return inv;
}

}  // namespace rdmanet
