#pragma once
// The health model: when is a pool device Healthy.
//
// A device is Unhealthy when something we can observe says it cannot carry traffic:
// - its own netdev has no carrier;
// - its PF's netdev has no carrier (a VF's traffic leaves through the PF's port);
// - a port of its RDMA device is not ACTIVE.
// What cannot be observed does not count against it: a VF whose netdev lives in a pod's
// namespace has no netdev in ours, and is judged by its PF and RDMA port alone.
//
// Carrier comes from netlink (LinkMonitor events and a dump) where the link exists in our
// namespace, and from sysfs `operstate` otherwise (see LinkStates). Nothing here does I/O.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/inventory/node.h"
#include "deviceplugin/pool.h"

namespace rdmanet::dp {

inline constexpr int kRdmaPortActive = 4;  // IB_PORT_ACTIVE, as in "4: ACTIVE"

// Carrier by netdev name. netlink beats sysfs: set() overrides what fromSysfs() read.
class LinkStates {
 public:
  // Seeds from each netdev's sysfs operstate ("up" and "unknown" count as up).
  void seedFromInventory(const NodeInventory& inv);
  void set(const std::string& name, bool carrier) { carrier_[name] = carrier; }
  void erase(const std::string& name) { carrier_.erase(name); }
  std::optional<bool> get(const std::string& name) const;

 private:
  std::map<std::string, bool> carrier_;
};

bool isHealthy(const PoolDevice& d, const LinkStates& links);

struct HealthChange {
  std::string id{};
  bool healthy = false;
};

// Recomputes every device's health; returns the devices whose health changed.
std::vector<HealthChange> applyHealth(Pool& pool, const LinkStates& links);

}  // namespace rdmanet::dp
