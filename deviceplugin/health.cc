#include "deviceplugin/health.h"

#include <algorithm>

namespace rdmanet::dp {

void LinkStates::seedFromInventory(const NodeInventory& inv) {
  for (const NicFunction& fn : inv.nics) {
    for (const Netdev& n : fn.netdevs) {
      carrier_[n.name] = n.operstate == "up" || n.operstate == "unknown";
    }
  }
}

std::optional<bool> LinkStates::get(const std::string& name) const {
  auto it = carrier_.find(name);
  if (it == carrier_.end()) return std::nullopt;
  return it->second;
}

bool isHealthy(const PoolDevice& d, const LinkStates& links) {
  for (const std::string* name : {&d.netdev, &d.pf_netdev}) {
    if (name->empty()) continue;
    if (auto up = links.get(*name); up && !*up) return false;
  }
  return std::all_of(d.rdma_port_states.begin(), d.rdma_port_states.end(),
                     [](int s) { return s == kRdmaPortActive; });
}

std::vector<HealthChange> applyHealth(Pool& pool, const LinkStates& links) {
  std::vector<HealthChange> changes;
  for (PoolDevice& d : pool.devices) {
    bool h = isHealthy(d, links);
    if (h != d.healthy) changes.push_back({d.id, h});
    d.healthy = h;
  }
  return changes;
}

}  // namespace rdmanet::dp
