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

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

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

// The latest DeviceSnapshot, shared between the front's thread (which replaces it) and the gRPC
// threads (which read it and wait for a newer one).
class DeviceState {
 public:
  DeviceState();
  std::shared_ptr<const DeviceSnapshot> current() const;
  // Installs `inv` with the next version number.
  void publish(DeviceSnapshot inv);
  // Waits up to `timeout` for a version above `version`, or for stop(); null when none came.
  std::shared_ptr<const DeviceSnapshot> waitNewer(uint64_t version,
                                                  std::chrono::milliseconds timeout) const;
  // Wakes every waiter; waitNewer returns null at once from then on.
  void stop();
  bool stopped() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::shared_ptr<const DeviceSnapshot> inv_;
  bool stopped_ = false;
};

}  // namespace rdmanet::dp
