#pragma once
// The devices rdmanet offers through DRA, derived from the core's pools (pools/node_pools.h), and
// the thread-safe snapshot of them that the gRPC threads (prepare, health streams) read.
//
// - A `vf` pool gives one DRA device per pool device (a VF, or a PF without VFs).
// - A `shared` pool gives its PF once (its slots all stand for the same function); the device is
//   marked `shareable`, which the slice publisher turns into allowMultipleAllocations (KEP-5075)
//   when that is enabled.
// - Device names are dra::pciDeviceName() of the PCI address, stable across restarts.
//   A function offered by two pools (a PF without VFs in a vf pool and in a shared pool) is
//   published once, by the pool that comes first in the config.
// All of a node's devices form one DRA pool, named after the node.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/versioned_state.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {

struct NodeDevice {
  std::string name{};      // "pci-0000-17-00-2": dra::pciDeviceName()
  std::string pool{};      // the core pool it belongs to, "rdma/vf"
  bool shareable = false;  // a shared pool's PF
  PoolDevice device{};     // a shared PF: its first slot (the ID buildAllocation takes)

  bool healthy() const { return device.healthy; }
  bool operator==(const NodeDevice&) const = default;
};

// What the front publishes: the core's pools (the allocation code works on them) and the DRA
// devices over them, sorted by name.
struct DeviceSnapshot {
  uint64_t version = 0;
  std::vector<Pool> pools{};
  std::vector<NodeDevice> devices{};

  const NodeDevice* find(std::string_view name) const;
  const Pool* pool(std::string_view full_name) const;
};

// The DRA devices of these pools, sorted by name. A name offered twice keeps the first pool's
// device and is returned in `duplicates` (for a log line).
std::vector<NodeDevice> nodeDevices(const std::vector<Pool>& pools,
                                    std::vector<std::string>* duplicates = nullptr);

// The latest DeviceSnapshot, shared between the front's thread (which publishes it, stamping its
// version with stampVersion) and the gRPC threads (which read it and wait for a newer one).
using DeviceState = VersionedState<DeviceSnapshot>;
inline void stampVersion(DeviceSnapshot& snap, uint64_t version) { snap.version = version; }

}  // namespace rdmanet::dp
