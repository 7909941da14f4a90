#include "deviceplugin/pools/health.h"

#include <fmt/format.h>

#include "common/inventory/rdma_port_state.h"

namespace rdmanet::dp {

namespace {

// The first port of `rdma` that is not ACTIVE, as "mlx5_0 port 1 is DOWN".
std::optional<std::string> inactivePort(const std::string& rdma, const HealthInputs& in) {
  if (rdma.empty()) return std::nullopt;
  auto it = in.rdma_ports.find(rdma);
  if (it == in.rdma_ports.end()) return std::nullopt;
  for (size_t i = 0; i < it->second.size(); ++i) {
    int s = it->second[i];
    if (s != kRdmaPortActive)
      return fmt::format("{} port {} is {}", rdma, i + 1, rdmaPortStateName(s, "unknown"));
  }
  return std::nullopt;
}

// A netdev that must carry traffic now (a VF's PF, a shared PF): down or without carrier is a
// fault. Unknown to netlink and sysfs: not judged.
std::optional<std::string> mustBeUp(const std::string& netdev, const LinkStates& links) {
  if (netdev.empty()) return std::nullopt;
  auto s = links.get(netdev);
  if (!s) return std::nullopt;
  if (s->admin_up == false) return fmt::format("{} is down", netdev);
  if (!s->carrier) return fmt::format("{} has no carrier", netdev);
  return std::nullopt;
}

bool isUp(const std::string& netdev, const LinkStates& links) {
  auto s = netdev.empty() ? std::nullopt : links.get(netdev);
  return s && s->admin_up == true;
}

}  // namespace

void LinkStates::seedFromInventory(const NodeInventory& inv) {
  for (const NicFunction& fn : inv.nics) {
    for (const Netdev& n : fn.netdevs) {
      bool up = n.operstate == "up" || n.operstate == "unknown";
      // operstate "down" is either administratively down or no carrier: leave admin unknown.
      states_[n.name] =
          LinkState{.admin_up = up ? std::optional<bool>(true) : std::nullopt, .carrier = up};
    }
  }
}

std::optional<LinkState> LinkStates::get(const std::string& name) const {
  auto it = states_.find(name);
  if (it == states_.end()) return std::nullopt;
  return it->second;
}

void HealthInputs::seedFromInventory(const NodeInventory& inv) {
  links.seedFromInventory(inv);
  for (const NicFunction& fn : inv.nics) {
    for (const RdmaDevice& r : fn.rdma) {
      std::vector<int>& states = rdma_ports[r.name];
      states.clear();
      for (const RdmaPort& p : r.ports) states.push_back(p.state_num);
    }
  }
}

std::optional<std::string> faultOf(const PoolDevice& d, bool shared, const HealthInputs& in) {
  if (d.pf) {
    // A VF: its function first, then its PF's port, then its link state on the PF.
    if (d.driver.empty()) return std::string("no driver bound");
    if (d.driver == "vfio-pci") return std::string("bound to vfio-pci (no netdev)");
    if (auto f = mustBeUp(d.pf_netdev, in.links)) return f;
    if (auto f = inactivePort(d.pf_rdma_device, in)) return f;
    if (d.vf_index && !d.pf_netdev.empty()) {
      if (auto pf = in.vf_links.find(d.pf_netdev); pf != in.vf_links.end()) {
        auto vf = pf->second.find(*d.vf_index);
        if (vf != pf->second.end() && vf->second == VfLinkState::kDisable) {
          return fmt::format("link forced off on {} (vf {} state disable)", d.pf_netdev,
                             *d.vf_index);
        }
      }
    }
    return std::nullopt;
  }
  if (d.driver == "vfio-pci") return std::string("bound to vfio-pci (no netdev)");
  if (shared) {
    if (auto f = mustBeUp(d.netdev, in.links)) return f;
    return inactivePort(d.rdma_device, in);
  }
  // A whole function: free means down; only an up link without carrier or port is a fault.
  if (!isUp(d.netdev, in.links)) return std::nullopt;
  if (auto f = mustBeUp(d.netdev, in.links)) return f;
  return inactivePort(d.rdma_device, in);
}

std::vector<HealthChange> applyHealth(Pool& pool, const HealthInputs& in) {
  const bool shared = pool.config.mode == PoolMode::kShared;
  std::vector<HealthChange> changes;
  for (PoolDevice& d : pool.devices) {
    auto fault = faultOf(d, shared, in);
    bool h = !fault;
    if (h != d.healthy) changes.push_back({d.id, h, fault.value_or("")});
    d.healthy = h;
    d.fault = fault.value_or("");
  }
  return changes;
}

}  // namespace rdmanet::dp
