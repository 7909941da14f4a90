#include "deviceplugin/pools/moved_attributes.h"

namespace rdmanet::dp {

void MovedAttributes::observe(const NodeInventory& inv) {
  std::map<PciAddress, Seen> seen;
  views_.clear();
  for (const NicFunction& fn : inv.nics) {
    const PciAddress& a = fn.pci.address;
    if (!fn.netdevs.empty()) {
      seen[a] = Seen{fn.pci.driver, fn.netdevs, fn.rdma};
      continue;
    }
    auto it = seen_.find(a);
    // Unbound (no driver at all) is a fault, not a choice: the function keeps its place and the
    // health model marks it Unhealthy. A different driver (vfio-pci) is a deliberate rebind: it
    // is forgotten, so a pool of that kind can take it.
    if (it == seen_.end() || (!fn.pci.driver.empty() && it->second.driver != fn.pci.driver)) {
      continue;
    }
    seen[a] = it->second;
    NicFunction view = fn;
    view.netdevs = it->second.netdevs;
    if (view.rdma.empty()) view.rdma = it->second.rdma;
    views_.emplace(a, std::move(view));
  }
  seen_ = std::move(seen);  // functions gone from the node are forgotten
}

const NicFunction& MovedAttributes::forSelection(const NicFunction& fn) const {
  auto it = views_.find(fn.pci.address);
  return it == views_.end() ? fn : it->second;
}

}  // namespace rdmanet::dp
