#include "deviceplugin/pools/pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace rdmanet::dp {

namespace {

template <typename T>
bool anyOf(const std::vector<T>& values, const T& v) {
  return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
}

bool refMatches(const std::vector<DeviceRef>& refs, const NicFunction& fn, const NicFunction* pf,
                bool by_address) {
  if (refs.empty()) return true;
  for (const DeviceRef& r : refs) {
    if (fn.pci.isVf()) {
      if (!pf) continue;
      bool pf_hit = by_address ? pf->pci.address.str() == r.pf
                               : std::any_of(pf->netdevs.begin(), pf->netdevs.end(),
                                             [&](const Netdev& n) { return n.name == r.pf; });
      if (!pf_hit) continue;
      if (!r.vf_indexes) return true;
      if (fn.pci.vf_index && r.vf_indexes->count(*fn.pci.vf_index)) return true;
    } else if (!r.vf_indexes) {
      // A PF named without a VF range: the PF itself (what shared pools select).
      bool hit = by_address ? fn.pci.address.str() == r.pf
                            : std::any_of(fn.netdevs.begin(), fn.netdevs.end(),
                                          [&](const Netdev& n) { return n.name == r.pf; });
      if (hit) return true;
    }
  }
  return false;
}

std::string firstNetdev(const NicFunction& fn) {
  return fn.netdevs.empty() ? std::string() : fn.netdevs.front().name;
}

PoolDevice makeDevice(const NicFunction& fn, const NodeInventory& inv) {
  PoolDevice d;
  d.id = fn.pci.address.str();
  d.pci = fn.pci.address;
  d.pf = fn.pci.pf;
  d.numa_node = fn.pci.numa_node;
  d.netdev = firstNetdev(fn);
  d.driver = fn.pci.driver;
  d.vf_index = fn.pci.vf_index;
  if (!fn.netdevs.empty()) {
    d.link_type = linkTypeName(fn.netdevs.front().link_type);
    d.port_speed_mbps = fn.netdevs.front().speed_mbps;
  }
  if (fn.pci.pf) {
    if (const NicFunction* pf = inv.nic(*fn.pci.pf)) {
      d.pf_netdev = firstNetdev(*pf);
      // A VF's link layer is its PF's; taking it from there keeps it while the VF's netdev is
      // in a pod (the host no longer lists it).
      if (!pf->netdevs.empty()) {
        d.link_type = linkTypeName(pf->netdevs.front().link_type);
        d.port_speed_mbps = pf->netdevs.front().speed_mbps;
      }
      if (!pf->rdma.empty()) d.pf_rdma_device = pf->rdma.front().name;
    }
  }
  if (!fn.rdma.empty()) {
    const RdmaDevice& r = fn.rdma.front();
    d.rdma_device = r.name;
    for (const RdmaCharDevice& c : r.char_devices) {
      if (c.name != "rdma_cm") d.char_devices.push_back({c.name, c.dev_path, c.major, c.minor});
    }
  }
  if (auto it = inv.nearest_gpu.find(fn.pci.address); it != inv.nearest_gpu.end()) {
    d.gpu_distance = it->second;
  }
  return d;
}

}  // namespace

const PoolDevice* Pool::find(std::string_view id) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), id,
                             [](const PoolDevice& d, std::string_view v) { return d.id < v; });
  return it != devices.end() && it->id == id ? &*it : nullptr;
}

size_t Pool::healthyCount() const {
  return std::count_if(devices.begin(), devices.end(),
                       [](const PoolDevice& d) { return d.healthy; });
}

bool selectorMatches(const Selector& s, const NicFunction& fn, const NodeInventory& inv) {
  const PciFunction& p = fn.pci;
  if (!anyOf(s.vendors, p.vendor) || !anyOf(s.devices, p.device) || !anyOf(s.drivers, p.driver) ||
      !anyOf(s.pci_addresses, p.address)) {
    return false;
  }
  if (s.is_rdma && *s.is_rdma != !fn.rdma.empty()) return false;
  if (!s.link_types.empty()) {
    bool hit = std::any_of(fn.netdevs.begin(), fn.netdevs.end(), [&](const Netdev& n) {
      return anyOf(s.link_types, std::string(linkTypeName(n.link_type)));
    });
    if (!hit) return false;
  }
  if (!s.if_names.empty()) {
    bool hit = std::any_of(fn.netdevs.begin(), fn.netdevs.end(),
                           [&](const Netdev& n) { return anyOf(s.if_names, n.name); });
    if (!hit) return false;
  }
  const NicFunction* pf = p.pf ? inv.nic(*p.pf) : nullptr;
  return refMatches(s.pf_names, fn, pf, false) && refMatches(s.root_devices, fn, pf, true);
}

bool eligibleFor(PoolMode mode, const NicFunction& fn) {
  if (!fn.pci.isNetwork()) return false;
  if (mode == PoolMode::kShared) return !fn.pci.isVf() && !fn.rdma.empty();
  return !(fn.pci.isPf() && fn.pci.sriov_numvfs > 0);
}

std::string sharedSlotId(const PciAddress& pf, int slot) {
  return fmt::format("{}-{}", pf.str(), slot);
}

std::vector<Pool> buildPools(const PluginConfig& cfg, const NodeInventory& inv,
                             const MovedAttributes* moved) {
  std::vector<Pool> pools;
  std::set<PciAddress> claimed[2];  // per mode
  for (const PoolConfig& pc : cfg.pools) {
    Pool pool{.config = pc};
    auto& taken = claimed[pc.mode == PoolMode::kVf ? 0 : 1];
    for (const NicFunction& fn : inv.nics) {
      const NicFunction& seen = moved ? moved->forSelection(fn) : fn;
      if (!eligibleFor(pc.mode, seen) || taken.count(fn.pci.address)) continue;
      bool match = pc.selectors.empty() ||
                   std::any_of(pc.selectors.begin(), pc.selectors.end(),
                               [&](const Selector& s) { return selectorMatches(s, seen, inv); });
      if (!match) continue;
      taken.insert(fn.pci.address);
      PoolDevice base = makeDevice(fn, inv);
      if (pc.mode == PoolMode::kVf) {
        pool.devices.push_back(std::move(base));
        continue;
      }
      for (int slot = 0; slot < pc.rdma_hca_max; ++slot) {
        PoolDevice d = base;
        d.id = sharedSlotId(fn.pci.address, slot);
        pool.devices.push_back(std::move(d));
      }
    }
    std::sort(pool.devices.begin(), pool.devices.end(),
              [](const PoolDevice& a, const PoolDevice& b) { return a.id < b.id; });
    pools.push_back(std::move(pool));
  }
  return pools;
}

}  // namespace rdmanet::dp
