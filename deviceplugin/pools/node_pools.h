#pragma once
// NodePools: the core's live view of the node, turned into the pools of the running config with
// their health. Both kubelet fronts (v1beta1, DRA) consume what build() returns, so which
// devices a pool holds and whether they are healthy is decided once, here.
//
// It holds the inventory (a sysfs scan), what functions whose netdev went into a pod looked like
// (moved_attributes.h), and the health inputs (health.h): netlink link states, RDMA port states
// and each PF's VF table. Single-threaded: the daemon loop owns it. I/O: sysfs reads through
// `sysfs`, and the VF tables through `vf_tables` (netlink in production; absent: not judged).

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/base/sysfs.h"
#include "common/inventory/node.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/health.h"
#include "deviceplugin/pools/moved_attributes.h"
#include "deviceplugin/pools/pool.h"
#include "deviceplugin/pools/scan_shape.h"

namespace rdmanet::dp {

// Reads a PF netdev's VF table (link state by VF index). Error 100 when the PF is gone.
using VfTableReader = std::function<Result<std::map<int, VfLinkState>>(const std::string& pf)>;

struct PoolHealthChange {
  std::string pool{};  // "rdma/vf"
  HealthChange change{};
};

// A port's LLDP neighbour and the rail the config's rule names from it ("" for none).
struct PortNeighbor {
  LldpNeighbor neighbor{};
  std::string rail{};
};

struct BuiltPools {
  std::vector<Pool> pools{};  // in config order, health applied
  std::vector<PoolHealthChange> changes{};
};

class NodePools {
 public:
  NodePools(const Sysfs& sysfs, PluginConfig config, VfTableReader vf_tables = {});

  const PluginConfig& config() const { return config_; }
  void setConfig(PluginConfig config) { config_ = std::move(config); }
  const NodeInventory& inventory() const { return inv_; }
  size_t movedCount() const { return moved_.movedCount(); }

  // Scans the whole node again: inventory, moved attributes, RDMA ports (from the scan) and
  // every PF's VF table.
  void rescan();

  // Re-reads only the PFs (with their VFs) that the functions behind these uevent DEVPATHs
  // belong to (rescanPf), and what depends on them. Falls back to rescan() when a path names no
  // known PCI function (a software RDMA device, a function already gone). Returns whether it
  // had to rescan the whole node.
  bool rescanFor(const std::vector<std::string>& devpaths);

  // The periodic safety net against lost events, at a fraction of rescan()'s cost: when sysfs
  // no longer shows what the last scan read (scan_shape.h), a full rescan(); otherwise it only
  // re-reads what changes without a uevent: every RDMA port's state, the non-VF functions'
  // netdevs (their link state when netlink is not there to say it) and the PFs' VF tables.
  // Returns whether anything a build() looks at changed; `why` (optional) gets what did.
  bool resync(std::string* why = nullptr);

  // Netlink's word on a link (it beats sysfs). Returns true when the state changed.
  bool setLink(const std::string& name, LinkState state);
  void eraseLink(const std::string& name);
  // Forgets every netlink state (before a fresh dump after lost notifications).
  void clearLinks() { links_.clear(); }
  // Re-reads the RDMA ports of the functions owning these netdevs (a port settles after its
  // link: re-read after a flap).
  void refreshPorts(const std::set<std::string>& netdevs);
  // Re-reads these PFs' VF tables.
  void refreshVfTables(const std::set<std::string>& pfs);

  // The LLDP neighbours heard on the ports, by netdev (the daemon keeps them to their TTL).
  // Returns whether they changed.
  bool setNeighbors(std::map<std::string, LldpNeighbor> neighbors);
  // The neighbours set last, by port netdev, each with its rail under the running config.
  std::map<std::string, PortNeighbor> portNeighbors() const;
  // The netdevs of the functions that are not VFs: the ports LLDP is heard on.
  std::set<std::string> portNetdevs() const;

  bool hasNetdev(const std::string& name) const;
  // A netdev of a function with VFs (its updates may carry VF link-state changes).
  bool isPfNetdev(const std::string& name) const;

  // The pools of the running config with health. Health transitions are counted against the
  // previous build (the first build reports only devices that start Unhealthy).
  BuiltPools build();

 private:
  HealthInputs healthInputs() const;
  std::set<std::string> pfNetdevs() const;

  const Sysfs& sysfs_;
  PluginConfig config_;
  VfTableReader vf_tables_;
  NodeInventory inv_;
  ScanShape shape_;  // the node-wide listings the inventory was scanned with
  MovedAttributes moved_;
  std::map<std::string, LinkState> links_;                          // netlink, by netdev
  std::map<std::string, std::vector<int>> ports_;                   // RDMA device -> port states
  std::map<std::string, std::map<int, VfLinkState>> vf_links_;      // PF netdev -> VF table
  std::map<std::string, LldpNeighbor> neighbors_;                   // port netdev -> LLDP
  std::map<std::string, std::map<std::string, bool>> last_health_;  // pool -> id -> healthy
};

}  // namespace rdmanet::dp
