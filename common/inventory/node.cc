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

namespace {

// The RDMA devices of one function from the node-wide grouping. A hardware device that sits under
// the function but is missing from /sys/class/infiniband is not in the grouping; such a function
// is read on its own.
std::vector<RdmaDevice> rdmaOf(const Sysfs& sysfs, const PciAddress& addr,
                               std::map<PciAddress, std::vector<RdmaDevice>>& by_fn) {
  std::vector<RdmaDevice> devs;
  if (auto it = by_fn.find(addr); it != by_fn.end()) devs = std::move(it->second);
  for (const auto& name : sysfs.list("/sys/bus/pci/devices/" + addr.str() + "/infiniband")) {
    const bool known =
        std::any_of(devs.begin(), devs.end(), [&](const RdmaDevice& d) { return d.name == name; });
    if (!known) return rdmaDevicesOf(sysfs, addr);
  }
  return devs;
}

}  // namespace

NodeInventory scanNode(const Sysfs& sysfs) {
  NodeInventory inv;
  auto rdma_by_fn = rdmaDevicesByFunction(sysfs);
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
                                     .rdma = rdmaOf(sysfs, addr, rdma_by_fn)});
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
