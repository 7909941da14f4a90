#pragma once
// Pools: the devices of one resource, built from the node inventory and a PoolConfig.
//
// A pool device is a plain struct holding everything Allocate, health and the preferred
// allocation policies need, captured at scan time, so none of them touches sysfs.
// Device IDs are stable across plugin restarts: the VF's PCI address in vf mode, and
// "<PF address>-<slot>" in shared mode.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/inventory/node.h"
#include "common/net/lldp_frame.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/moved_attributes.h"

namespace rdmanet::dp {

// A user-space RDMA char device of a pool device (copied from the inventory's RdmaCharDevice).
struct CharDevice {
  std::string name{};      // "uverbs2"
  std::string dev_path{};  // "/dev/infiniband/uverbs2"
  int major = 0;
  int minor = 0;
  bool operator==(const CharDevice&) const = default;
};

struct PoolDevice {
  std::string id{};
  PciAddress pci{};                // the function handed out (the PF for shared slots)
  std::optional<PciAddress> pf{};  // a VF's PF
  int numa_node = -1;
  std::string netdev{};                    // the function's netdev, "" when it has none
  std::string pf_netdev{};                 // a VF's PF netdev, "" when unknown
  std::string rdma_device{};               // "mlx5_2", "" when none
  std::vector<CharDevice> char_devices{};  // uverbs/umad/issm of rdma_device (not rdma_cm)
  std::string driver{};                    // the bound driver, "" when unbound
  std::optional<int> vf_index{};           // a VF's N in its PF's virtfnN
  std::string pf_rdma_device{};            // a VF's PF's RDMA device, "" when none
  std::string link_type{};                 // "ether", "infiniband" (a VF's: its PF's); "" unknown
  std::optional<Distance> gpu_distance{};  // to the nearest GPU
  // The link speed of the port it sends through (a VF's: its PF's, which is the port's; a VF's
  // own netdev reports the PF's or nothing). Absent while the link is down or unknown.
  std::optional<int> port_speed_mbps{};
  // The switch port its port is cabled to, from LLDP on the port's netdev (a VF's: its PF's),
  // and the rail the config's rule names from it ("" when none). Absent until a frame arrives,
  // and again once its TTL runs out.
  std::optional<LldpNeighbor> neighbor{};
  std::string rail{};
  bool healthy = true;
  std::string fault{};  // why it is Unhealthy (health.h faultOf), "" while Healthy

  // The PF this device belongs to (its own address for a PF or a shared slot): what pack and
  // spread group by.
  const PciAddress& pfAddress() const { return pf ? *pf : pci; }
  bool operator==(const PoolDevice&) const = default;
};

struct Pool {
  PoolConfig config{};
  std::vector<PoolDevice> devices{};  // sorted by id

  const PoolDevice* find(std::string_view id) const;
  size_t healthyCount() const;
};

// Whether `fn` matches one selector (fields ANDed, values ORed), looking up its PF in `inv`.
bool selectorMatches(const Selector& s, const NicFunction& fn, const NodeInventory& inv);
// Whether `fn` can be a device of a pool of this mode at all: vf mode takes network functions
// except PFs with VFs enabled (as sriov-network-device-plugin does); shared mode takes
// functions that are not VFs and have an RDMA device.
bool eligibleFor(PoolMode mode, const NicFunction& fn);

// Builds all pools in config order. A function claimed by an earlier pool is not offered by a
// later pool of the same mode; shared pools claim PFs and vf pools claim VFs, so a PF's VFs can
// be one pool while the PF is shared in another. Health starts as "healthy"; see health.h.
// With `moved`, eligibility and selectors see functions whose netdev is in a pod as they were
// (moved_attributes.h); the devices themselves are built from `inv`.
std::vector<Pool> buildPools(const PluginConfig& cfg, const NodeInventory& inv,
                             const MovedAttributes* moved = nullptr);

// "0000:17:00.0-7": the ID of slot 7 of a shared PF.
std::string sharedSlotId(const PciAddress& pf, int slot);

}  // namespace rdmanet::dp
