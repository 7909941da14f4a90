#pragma once
// The health model: when is a pool device Healthy.
//
// A device is Unhealthy only when something that really stops it from carrying traffic is
// observed. The model follows what breaks an SR-IOV VF, not what a free VF looks like:
//
// - The PF's side (a VF's traffic leaves through its PF's port): the PF's netdev is down or has
//   no carrier, or a port of the PF's RDMA device is not ACTIVE.
// - The VF's side: its link is forced off on the PF (`ip link set <pf> vf N state disable`,
//   IFLA_VF_LINK_STATE_DISABLE); it has no driver, or is bound to vfio-pci (no netdev, no RDMA
//   device: useless to a netdev pool). A VF that vanished leaves its pool (rescan).
// - Not a fault: a free VF being administratively down (the normal state after sriov_numvfs;
//   only the CNI brings it up, inside the pod), and its RDMA port being DOWN because of that (on
//   mlx5 a VF's RDMA port follows its netdev). Neither is looked at. So an allocated VF whose
//   netdev is in a pod is judged exactly like a free one: by its PF and its link state on the PF.
// - A whole function (a PF without VFs handed to a pod by host-device): administratively down
//   is its free state too; it is faulty when it is up without carrier, or up with an RDMA port
//   that is not ACTIVE.
// - A shared PF (macvlan pools): the host's PF itself carries the pods' traffic, so it must be
//   up with carrier and ACTIVE RDMA ports, like the PF of a VF.
//
// What cannot be observed never counts against a device: a netdev unknown to both netlink and
// sysfs, a PF whose VF table was not read, an RDMA device whose ports are not visible.
// sriov-network-device-plugin reports a device Healthy as long as it is present, and the RDMA
// shared device plugin never changes health; this model is stricter than theirs only where the
// device cannot work.
//
// Nothing here does I/O: the daemon feeds HealthInputs from netlink and sysfs.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/inventory/node.h"
#include "common/net/netlink.h"
#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {

inline constexpr int kRdmaPortActive = 4;  // IB_PORT_ACTIVE, as in "4: ACTIVE"

// A netdev's state. `admin_up` is unknown when only sysfs' operstate was read and it said
// "down" (administratively down or no carrier: sysfs cannot tell which).
struct LinkState {
  std::optional<bool> admin_up{};  // IFF_UP
  bool carrier = false;            // IFF_LOWER_UP (and operstate up)
};

// Link state by netdev name. netlink beats sysfs: set() overrides what seedFromInventory() read.
class LinkStates {
 public:
  // Seeds from each netdev's sysfs operstate ("up" and "unknown" count as up with carrier).
  void seedFromInventory(const NodeInventory& inv);
  void set(const std::string& name, LinkState state) { states_[name] = state; }
  void erase(const std::string& name) { states_.erase(name); }
  std::optional<LinkState> get(const std::string& name) const;

 private:
  std::map<std::string, LinkState> states_;
};

// Everything the model looks at besides the device itself.
struct HealthInputs {
  LinkStates links{};
  // Port states (numeric, 4 = ACTIVE) by RDMA device; a device missing here is not judged.
  std::map<std::string, std::vector<int>> rdma_ports{};
  // Each PF netdev's VF table as the PF reports it (IFLA_VFINFO_LIST), by VF index; a PF
  // missing here is not judged on its VFs' link states.
  std::map<std::string, std::map<int, VfLinkState>> vf_links{};

  // Seeds links and RDMA port states from a scan (sysfs operstate and port `state` files).
  void seedFromInventory(const NodeInventory& inv);
};

// Why `d` cannot carry traffic now, or nullopt when it is Healthy. `shared`: a slot of a
// shared PF (see above). The reason names the netdev, port or driver at fault.
std::optional<std::string> faultOf(const PoolDevice& d, bool shared, const HealthInputs& in);

struct HealthChange {
  std::string id{};
  bool healthy = false;
  std::string reason{};  // why it is Unhealthy; empty on recovery
};

// Recomputes every device's health; returns the devices whose health changed.
std::vector<HealthChange> applyHealth(Pool& pool, const HealthInputs& in);

}  // namespace rdmanet::dp
