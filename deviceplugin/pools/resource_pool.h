#pragma once
// ResourcePool: one pool's live state, shared between the daemon loop (which updates devices and
// health) and the gRPC handlers of its endpoint (which read it). Thread-safe.
//
// The gRPC layer stays a thin translation: everything a handler decides is decided here, in
// plain C++ that unit tests drive directly.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "common/base/versioned_state.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/pools/allocate.h"
#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {

struct ResourcePoolOptions {
  std::filesystem::path devinfo_dir{};  // empty: do not write device-info files
  std::filesystem::path cdi_dir{};      // used when cdi is set
  bool cdi = false;
};

struct PoolSnapshot {
  uint64_t version = 0;  // increases with every visible change
  std::vector<PoolDevice> devices{};
};

class ResourcePool {
 public:
  // `metrics` may be null; it and `clock` (which times Allocate for the metrics) must outlive
  // the pool.
  ResourcePool(Pool pool, ResourcePoolOptions opts, Metrics* metrics, const Clock& clock);

  // Immutable: a pool whose config changes is replaced, not edited.
  const PoolConfig& config() const { return config_; }
  const std::string& resourceName() const { return name_; }

  // Replaces the device list (membership and health). Bumps the version and wakes ListAndWatch
  // streams only if something changed; counts health transitions; rewrites the device-info
  // files and the CDI spec when membership changed. Returns true if anything changed.
  bool setDevices(std::vector<PoolDevice> devices);

  PoolSnapshot snapshot() const;
  // Waits until the version is above `seen` (returns the new snapshot), or the pool is stopped
  // or `timeout` passes (returns nullopt).
  // `cancel`, when given, also ends the wait once it is true and kick() was called.
  std::optional<PoolSnapshot> waitNewer(uint64_t seen, std::chrono::milliseconds timeout,
                                        const std::atomic<bool>* cancel = nullptr) const;
  // Wakes every waiter so it re-checks its `cancel` flag.
  void kick() const { published_.kick(); }
  // Ends all waits for good; used when the endpoint shuts down.
  void stop();
  bool stopped() const;

  // GetPreferredAllocation for one container request.
  std::vector<std::string> preferred(const std::vector<std::string>& available,
                                     const std::vector<std::string>& must_include, int size) const;
  // Allocate for all container requests of one call; all or nothing (see buildAllocation for
  // the error codes). Ensures the device-info files (and CDI spec) of the devices exist.
  Result<std::vector<ContainerAllocation>> allocate(
      const std::vector<std::vector<std::string>>& containers);

 private:
  void writeArtifacts(const Pool& pool);

  const PoolConfig config_;
  const std::string name_;
  const ResourcePoolOptions opts_;
  Metrics* const metrics_;
  const Clock& clock_;

  mutable std::mutex mu_;
  Pool pool_;  // guarded by mu_
  // pool_.devices as ListAndWatch streams see them; replaced under mu_, so in pool_'s order.
  VersionedState<std::vector<PoolDevice>> published_;
};

}  // namespace rdmanet::dp
