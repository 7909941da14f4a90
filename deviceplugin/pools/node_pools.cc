#include "deviceplugin/pools/node_pools.h"

#include <fmt/format.h>

#include <charconv>

namespace rdmanet::dp {

namespace {

constexpr ScanOptions kScan{.gids = false};  // pools never look at GID tables

// Numeric state of every port ("4: ACTIVE" -> 4); cheap enough to re-read on each link event.
std::vector<int> readPortStates(const Sysfs& sysfs, const std::string& dev) {
  std::vector<int> out;
  std::string base = "/sys/class/infiniband/" + dev + "/ports";
  for (const auto& port : sysfs.list(base)) {
    auto s = sysfs.readOpt(fmt::format("{}/{}/state", base, port));
    int v = 0;
    if (s) std::from_chars(s->data(), s->data() + s->size(), v);
    out.push_back(v);
  }
  return out;
}

}  // namespace

NodePools::NodePools(const Sysfs& sysfs, PluginConfig config, VfTableReader vf_tables)
    : sysfs_(sysfs), config_(std::move(config)), vf_tables_(std::move(vf_tables)) {}

void NodePools::rescan() {
  shape_ = readScanShape(sysfs_);  // before the scan: a change during it shows at the next resync
  inv_ = scanNode(sysfs_, kScan);
  moved_.observe(inv_);
  ports_.clear();  // the scan read them; HealthInputs seeds from it
  vf_links_.clear();
  refreshVfTables(pfNetdevs());
}

std::set<std::string> NodePools::pfNetdevs() const {
  std::set<std::string> pfs;
  for (const NicFunction& fn : inv_.nics) {
    if (!fn.pci.vfs.empty() && !fn.netdevs.empty()) pfs.insert(fn.netdevs.front().name);
  }
  return pfs;
}

bool NodePools::resync(std::string* why) {
  if (auto change = shapeChange(sysfs_, inv_, shape_)) {
    if (why) *why = *change;
    rescan();
    return true;
  }
  bool changed = false;
  // What health judges and no uevent announces, of the functions that are not VFs (a VF is
  // judged by its PF, health.h): their RDMA ports' states (a port goes down with its link and
  // comes back ACTIVE later) and their netdevs' link state in sysfs (health's fallback when
  // netlink is absent).
  for (NicFunction& fn : inv_.nics) {
    if (fn.pci.pf) continue;
    for (const RdmaDevice& r : fn.rdma) {
      std::vector<int> now = readPortStates(sysfs_, r.name);
      auto it = ports_.find(r.name);
      std::vector<int> before;
      if (it != ports_.end()) {
        before = it->second;
      } else {
        for (const RdmaPort& p : r.ports) before.push_back(p.state_num);
      }
      if (now != before) {
        changed = true;
        ports_[r.name] = std::move(now);
      }
    }
    std::vector<Netdev> now = netdevsOf(sysfs_, fn.pci.address);
    if (now != fn.netdevs) {
      changed = true;
      fn.netdevs = std::move(now);
    }
  }
  auto tables = vf_links_;
  refreshVfTables(pfNetdevs());
  if (tables != vf_links_) changed = true;
  if (changed && why) *why = "RDMA port, PF link or VF link state";
  return changed;
}

bool NodePools::rescanFor(const std::vector<std::string>& devpaths) {
  std::set<PciAddress> pfs;
  for (const std::string& path : devpaths) {
    auto fn = functionOfDevpath(path);
    auto pf = fn ? pfOf(sysfs_, inv_, *fn) : std::nullopt;
    if (!pf) {
      rescan();
      return true;
    }
    pfs.insert(*pf);
  }
  // The node-wide listings change with the re-read PFs (VFs created or removed): take them anew,
  // or the next resync would see a change the inventory already holds.
  shape_ = readScanShape(sysfs_);
  std::set<std::string> pf_netdevs;
  for (const PciAddress& pf : pfs) {
    for (const PciAddress& a : rescanPf(sysfs_, pf, inv_, kScan)) {
      const NicFunction* fn = inv_.nic(a);
      if (!fn) continue;
      for (const RdmaDevice& r : fn->rdma) ports_.erase(r.name);  // the rescan read them anew
      if (!fn->pci.vfs.empty() && !fn->netdevs.empty()) pf_netdevs.insert(fn->netdevs.front().name);
    }
  }
  moved_.observe(inv_);
  refreshVfTables(pf_netdevs);
  return false;
}

bool NodePools::setLink(const std::string& name, LinkState state) {
  auto it = links_.find(name);
  if (it != links_.end() && it->second.admin_up == state.admin_up &&
      it->second.carrier == state.carrier) {
    return false;
  }
  links_[name] = state;
  return true;
}

void NodePools::eraseLink(const std::string& name) { links_.erase(name); }

void NodePools::refreshPorts(const std::set<std::string>& netdevs) {
  std::set<std::string> devs;
  for (const NicFunction& fn : inv_.nics) {
    bool hit = false;
    for (const Netdev& n : fn.netdevs) hit = hit || netdevs.count(n.name) > 0;
    if (!hit) continue;
    // Only the function's own ports: a VF's port follows its netdev and is not judged
    // (health.h); its PF's port is the PF function's own.
    for (const auto& r : fn.rdma) devs.insert(r.name);
  }
  for (const auto& d : devs) ports_[d] = readPortStates(sysfs_, d);
}

void NodePools::refreshVfTables(const std::set<std::string>& pfs) {
  if (!vf_tables_) return;
  for (const std::string& pf : pfs) {
    auto table = vf_tables_(pf);
    if (table.ok()) {
      vf_links_[pf] = std::move(table).value();
    } else {
      vf_links_.erase(pf);  // not judged rather than judged on stale data
    }
  }
}

bool NodePools::hasNetdev(const std::string& name) const {
  for (const NicFunction& fn : inv_.nics) {
    for (const Netdev& n : fn.netdevs) {
      if (n.name == name) return true;
    }
  }
  return false;
}

bool NodePools::setNeighbors(std::map<std::string, LldpNeighbor> neighbors) {
  if (neighbors == neighbors_) return false;
  neighbors_ = std::move(neighbors);
  return true;
}

std::map<std::string, PortNeighbor> NodePools::portNeighbors() const {
  // The rule's regex runs once per port, not per VF.
  std::map<std::string, PortNeighbor> out;
  for (const auto& [port, n] : neighbors_) {
    out.emplace(port, PortNeighbor{n, railOf(config_.rails, n).value_or("")});
  }
  return out;
}

std::set<std::string> NodePools::portNetdevs() const {
  std::set<std::string> ports;
  for (const NicFunction& fn : inv_.nics) {
    if (!fn.pci.isVf() && !fn.netdevs.empty()) ports.insert(fn.netdevs.front().name);
  }
  return ports;
}

bool NodePools::isPfNetdev(const std::string& name) const {
  for (const NicFunction& fn : inv_.nics) {
    if (fn.pci.vfs.empty()) continue;
    for (const Netdev& n : fn.netdevs) {
      if (n.name == name) return true;
    }
  }
  return false;
}

HealthInputs NodePools::healthInputs() const {
  HealthInputs in;
  in.seedFromInventory(inv_);
  for (const auto& [name, state] : links_) in.links.set(name, state);
  for (const auto& [dev, ports] : ports_) in.rdma_ports[dev] = ports;
  in.vf_links = vf_links_;
  return in;
}

BuiltPools NodePools::build() {
  BuiltPools out;
  const std::map<std::string, PortNeighbor> neighbors = portNeighbors();
  auto applyNeighbor = [&](PoolDevice& d) {
    auto it = neighbors.find(d.pf ? d.pf_netdev : d.netdev);
    if (it == neighbors.end()) return;
    d.neighbor = it->second.neighbor;
    d.rail = it->second.rail;
  };
  const HealthInputs in = healthInputs();
  std::map<std::string, std::map<std::string, bool>> health;
  for (Pool& p : buildPools(config_, inv_, &moved_)) {
    const std::string name = p.config.fullName();
    const auto& before = last_health_[name];
    for (PoolDevice& d : p.devices) {
      auto it = before.find(d.id);
      d.healthy = it == before.end() || it->second;  // new devices start Healthy
    }
    for (HealthChange& c : applyHealth(p, in)) out.changes.push_back({name, std::move(c)});
    auto& now = health[name];
    for (PoolDevice& d : p.devices) {
      now[d.id] = d.healthy;
      applyNeighbor(d);
    }
    out.pools.push_back(std::move(p));
  }
  last_health_ = std::move(health);
  return out;
}

}  // namespace rdmanet::dp
