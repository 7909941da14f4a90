#include "deviceplugin/pools/resource_pool.h"

#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "deviceplugin/logging.h"
#include "deviceplugin/pools/artifacts.h"
#include "deviceplugin/pools/preferred.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

ResourcePool::ResourcePool(Pool pool, ResourcePoolOptions opts, Metrics* metrics,
                           const Clock& clock)
    : config_(pool.config),
      name_(pool.config.fullName()),
      opts_(std::move(opts)),
      metrics_(metrics),
      clock_(clock),
      pool_(std::move(pool)),
      published_(pool_.devices, 1) {
  if (metrics_) {
    size_t healthy = pool_.healthyCount();
    metrics_->setPoolDevices(name_, healthy, pool_.devices.size() - healthy);
  }
  writeArtifacts(pool_);
}

void ResourcePool::writeArtifacts(const Pool& pool) {
  auto log = logger(Component::kServer);
  if (!opts_.devinfo_dir.empty()) {
    for (const PoolDevice& d : pool.devices) {
      if (auto st = writeDeviceInfo(opts_.devinfo_dir, config_, d); !st.ok()) {
        log->warn("{}: device-info for {}: {}", name_, d.id, st.error().msg);
      }
    }
  }
  if (opts_.cdi) {
    if (auto st = writeCdiSpec(opts_.cdi_dir, pool); !st.ok()) {
      log->warn("{}: CDI spec: {}", name_, st.error().msg);
    }
  }
}

bool ResourcePool::setDevices(std::vector<PoolDevice> devices) {
  std::sort(devices.begin(), devices.end(),
            [](const PoolDevice& a, const PoolDevice& b) { return a.id < b.id; });
  bool membership_changed = false;
  Pool copy;
  {
    std::lock_guard lock(mu_);
    if (devices == pool_.devices) return false;
    std::map<std::string, bool> before;
    for (const PoolDevice& d : pool_.devices) before[d.id] = d.healthy;
    auto strip = [](std::vector<PoolDevice> v) {
      for (auto& d : v) d.healthy = true;
      return v;
    };
    membership_changed = strip(pool_.devices) != strip(devices);
    if (metrics_) {
      for (const PoolDevice& d : devices) {
        auto it = before.find(d.id);
        if (it != before.end() && it->second != d.healthy) {
          metrics_->countHealthTransition(name_, d.healthy);
        }
      }
    }
    pool_.devices = std::move(devices);
    published_.publish(pool_.devices);
    if (metrics_) {
      size_t healthy = pool_.healthyCount();
      metrics_->setPoolDevices(name_, healthy, pool_.devices.size() - healthy);
    }
    if (membership_changed) copy = pool_;
  }
  if (membership_changed) writeArtifacts(copy);
  return true;
}

PoolSnapshot ResourcePool::snapshot() const {
  auto s = published_.current();
  return {s.version, *s.value};
}

std::optional<PoolSnapshot> ResourcePool::waitNewer(uint64_t seen,
                                                    std::chrono::milliseconds timeout,
                                                    const std::atomic<bool>* cancel) const {
  auto s = published_.waitNewer(seen, timeout, cancel);
  if (!s.value) return std::nullopt;
  return PoolSnapshot{s.version, *s.value};
}

void ResourcePool::stop() { published_.stop(); }

bool ResourcePool::stopped() const { return published_.stopped(); }

std::vector<std::string> ResourcePool::preferred(const std::vector<std::string>& available,
                                                 const std::vector<std::string>& must_include,
                                                 int size) const {
  std::lock_guard lock(mu_);
  return preferredAllocation(pool_, available, must_include, size);
}

Result<std::vector<ContainerAllocation>> ResourcePool::allocate(
    const std::vector<std::vector<std::string>>& containers) {
  const auto start = clock_.now();
  std::vector<ContainerAllocation> out;
  std::vector<PoolDevice> missing_info;  // devices whose device-info file went missing
  bool cdi_missing = false;
  Error failure;
  bool ok = !containers.empty();
  if (!ok) failure = makeError(ErrorCode::kInvalidConfig, "Allocate has no container requests");
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; ok && i < containers.size(); ++i) {
      auto r = buildAllocation(pool_, containers[i], {.cdi = opts_.cdi});
      if (!r.ok()) {
        failure = r.error();
        ok = false;
        break;
      }
      out.push_back(std::move(r).value());
      // Normally written when the pool changed; re-created here if something removed them
      // since, so Multus and the runtime always find them. access(2) keeps this cheap.
      for (const auto& id : containers[i]) {
        if (opts_.devinfo_dir.empty()) break;
        std::string path = opts_.devinfo_dir.string() + "/" + deviceInfoFileName(config_, id);
        if (::access(path.c_str(), F_OK) != 0) missing_info.push_back(*pool_.find(id));
      }
    }
    if (ok && opts_.cdi) {
      std::string path = opts_.cdi_dir.string() + "/" + cdiSpecFileName(config_);
      cdi_missing = ::access(path.c_str(), F_OK) != 0;
    }
  }
  for (const PoolDevice& d : missing_info) {
    if (auto st = writeDeviceInfo(opts_.devinfo_dir, config_, d); !st.ok()) {
      failure = st.error();
      ok = false;
    }
  }
  if (ok && cdi_missing) {
    Pool copy;
    {
      std::lock_guard lock(mu_);
      copy = pool_;
    }
    if (auto st = writeCdiSpec(opts_.cdi_dir, copy); !st.ok()) {
      failure = st.error();
      ok = false;
    }
  }
  if (metrics_) {
    for (size_t i = 0; i < std::max<size_t>(containers.size(), 1); ++i) {
      metrics_->countAllocation(name_, ok);
    }
    const std::chrono::duration<double> took = clock_.now() - start;
    metrics_->observeAllocateSeconds(name_, took.count());
  }
  if (!ok) return failure;
  return out;
}

}  // namespace rdmanet::dp
