#pragma once
// The device plugin's configuration: which devices form which pools (resources), and how each
// pool is served.
//
// Accepted formats, all in one JSON document:
// - sriov-network-device-plugin, unchanged: top-level `resourceList[]` with `resourceName`,
//   `resourcePrefix`, `deviceType` ("netDevice"), `excludeTopology` and `selectors` (an object,
//   or an ordered list of objects) holding `vendors`, `devices`, `drivers`, `pciAddresses`,
//   `pfNames` and `rootDevices` (with "#0-3,5" VF index ranges), `linkTypes`, `isRdma`.
// - k8s-rdma-shared-dev-plugin: top-level `configList[]` with `resourceName`, `rdmaHcaMax` and
//   `selectors` holding `vendors`, `deviceIDs`, `drivers`, `ifNames`, `linkTypes`; these pools
//   default to mode "shared". `periodicUpdateInterval` is accepted and ignored (health here is
//   event-driven).
// - rdmanet's per-pool keys, in either list: `mode` ("vf" | "shared"), `lossless`
//   ({"priority": 0-7, "dscp": 0-63}), `preferredAllocation` ("pack" | "spread" | "gpu-near")
//   `podInfoDir` (an absolute path; vf pools only), `vfBandwidthMbps` (vf pools only: the
//   share of its PF's link each VF stands for) and `claimBandwidthMbps` (shared pools only: a
//   claim's default share of the PF's link); see PoolConfig.
// - rdmanet's top-level `rails` ({"from", "match", "rail"}): how a port's rail is named from its
//   LLDP neighbour (rail_rule.h).
//
// Unknown keys are rejected: a typo must not silently widen a pool. Every error message names the
// offending key by its path, e.g. `resourceList[1].selectors.pfNames[0]`.

#include <compare>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "deviceplugin/pools/rail_rule.h"

namespace rdmanet::dp {

enum class PoolMode { kVf, kShared };
enum class AllocationPolicy { kPack, kSpread, kGpuNear };

std::string_view poolModeName(PoolMode m);        // "vf", "shared"
std::string_view policyName(AllocationPolicy p);  // "pack", "spread", "gpu-near"

// A `pfNames` / `rootDevices` entry: a PF (by netdev name or PCI address) and optionally the VF
// indexes of it that are meant ("ens1f0#0-3,5"). Without a range it means the PF's VFs (all of
// them) and, for shared pools, the PF itself.
struct DeviceRef {
  std::string pf;                             // netdev name ("ens1f0") or canonical PCI address
  std::optional<std::set<int>> vf_indexes{};  // nullopt: no range given
  auto operator<=>(const DeviceRef&) const = default;
};

// Parses "name" or "name#0-3,5". `is_address` selects PCI-address or interface-name validation
// of the part before '#'. Error 7 naming `key` on bad input.
Result<DeviceRef> parseDeviceRef(std::string_view text, bool is_address, std::string_view key);

// One selector object. Fields are ANDed; values within one field are ORed; an empty field does
// not constrain.
struct Selector {
  std::vector<std::string> vendors{};  // lowercase hex, "15b3"
  std::vector<std::string> devices{};  // lowercase hex, "101e" (`devices` or `deviceIDs`)
  std::vector<std::string> drivers{};
  std::vector<PciAddress> pci_addresses{};
  std::vector<DeviceRef> pf_names{};
  std::vector<DeviceRef> root_devices{};
  std::vector<std::string> link_types{};  // "ether", "infiniband"
  std::vector<std::string> if_names{};    // the function's own netdev name
  std::optional<bool> is_rdma{};
  auto operator<=>(const Selector&) const = default;
};

struct Lossless {
  std::optional<int> priority{};  // 802.1p priority the traffic must use (PFC-protected)
  std::optional<int> dscp{};      // DSCP value mapped to that priority
  auto operator<=>(const Lossless&) const = default;
};

inline constexpr std::string_view kDefaultPrefix = "rdma";
inline constexpr int kDefaultSharedSlots = 100;

struct PoolConfig {
  std::string resource_prefix = std::string(kDefaultPrefix);
  std::string resource_name{};  // "vf"
  PoolMode mode = PoolMode::kVf;
  bool exclude_topology = false;
  int rdma_hca_max = kDefaultSharedSlots;  // shared mode: slots per PF HCA
  std::optional<Lossless> lossless{};
  AllocationPolicy preferred_allocation = AllocationPolicy::kGpuNear;
  // `podInfoDir` (vf pools): the host directory whose per-device subdirectories the CNI fills at
  // ADD (cni/pod/pod_info.h) and Allocate mounts into the container; empty: none.
  std::string pod_info_dir{};
  // `vfBandwidthMbps` (vf pools): each VF's share of its PF's link, in Mbit/s. Under DRA a VF
  // then consumes that much of a counter set holding its PF's link speed (KEP-4815), so the
  // scheduler never places more VFs on a port than the port carries, and the CNI caps the VF's
  // max_tx_rate at it. Unset: VFs are plain devices and their rate is the NAD's. This and
  // `claimBandwidthMbps` are 1..kMaxBandwidthMbps (common/base/bandwidth_limit.h).
  std::optional<int64_t> vf_bandwidth_mbps{};
  // `claimBandwidthMbps` (shared pools): under DRA with allowMultipleAllocations, the shared PF
  // states its link speed as consumable capacity (KEP-5075) and a claim that asks for no
  // bandwidth takes this much of it; the scheduler admits claims until the speed is used up.
  std::optional<int64_t> claim_bandwidth_mbps{};
  // Ordered; a device matches the pool if any selector matches. Empty matches every device.
  std::vector<Selector> selectors{};
  std::string key{};  // where it came from, for messages: "resourceList[0]"

  // "rdma/vf": what kubelet sees.
  std::string fullName() const { return resource_prefix + "/" + resource_name; }
  // Same pool semantics (ignores `key`), used by hot reload to keep unchanged pools serving.
  bool sameAs(const PoolConfig& o) const;
};

struct PluginConfig {
  std::vector<PoolConfig> pools;  // in config order: earlier pools claim devices first
  // `rails`: how a port's LLDP neighbour names its rail (rail_rule.h); the default names it
  // after the neighbour's system name.
  RailRule rails{};
};

// Parses and validates a config document. Error 6 if it is not JSON, 7 for invalid content,
// 2 for a value we do not implement (e.g. deviceType "accelerator").
Result<PluginConfig> parseConfig(std::string_view json_text);
// Reads and parses a file. Error 5 if it cannot be read.
Result<PluginConfig> loadConfigFile(const std::filesystem::path& path);
// The largest config file read: a node's pools fit in a few KiB; a file this large is a mistake.
inline constexpr size_t kMaxConfigBytes = 1 << 20;
// Used when no --config is given: `rdma/vf` (every RDMA-capable VF) and `rdma/shared` (every
// RDMA-capable PF, shared mode).
PluginConfig defaultConfig();

}  // namespace rdmanet::dp
