#include "deviceplugin/dra/kubelet/request_env.h"

#include <fmt/format.h>

#include <algorithm>

#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {

namespace {

constexpr std::string_view kHca = "NCCL_IB_HCA";
constexpr std::string_view kGdr = "NCCL_NET_GDR_LEVEL";

// NCCL_IB_HCA "=a,b" and "=c" give "=a,b,c": '=' (exact names) applies to the whole list.
std::string joinHcas(const std::string& a, const std::string& b) {
  return a + "," + (b.starts_with('=') ? b.substr(1) : b);
}

}  // namespace

Result<ResolvedDevice> resolveDevice(const DeviceSnapshot& inv, const NodeDevice& d) {
  const Pool* pool = inv.pool(d.pool);
  if (!pool) return makeError(ErrorCode::kInternal, fmt::format("pool {} vanished", d.pool));
  const PoolDevice* dev = pool->find(d.device.id);
  if (!dev) {
    return makeError(ErrorCode::kDeviceNotFound, fmt::format("device {} is not in pool {}",
                                                             d.device.id, pool->config.fullName()));
  }
  return ResolvedDevice{.node = &d, .pool = pool, .device = dev};
}

Result<std::map<std::string, std::string>> requestEnv(const std::vector<ResolvedDevice>& devs) {
  // The pools in the order their first device comes, each with its device IDs.
  std::vector<std::pair<const Pool*, std::vector<std::string>>> by_pool;
  std::vector<const PoolDevice*> all;
  for (const ResolvedDevice& d : devs) {
    auto it = std::find_if(by_pool.begin(), by_pool.end(),
                           [&](const auto& p) { return p.first == d.pool; });
    if (it == by_pool.end()) it = by_pool.insert(by_pool.end(), {d.pool, {}});
    it->second.push_back(d.device->id);
    all.push_back(d.device);
  }
  std::map<std::string, std::string> out;
  std::vector<std::string> disagreed;
  for (const auto& [pool, ids] : by_pool) {
    RDMANET_ASSIGN_OR_RETURN(ContainerAllocation a, buildAllocation(*pool, ids, {}));
    for (auto& [k, v] : a.envs) {
      auto [it, fresh] = out.try_emplace(k, v);
      if (fresh || it->second == v || k == kGdr) continue;
      if (k == kHca) {
        it->second = joinHcas(it->second, v);
      } else if (k == "NCCL_IB_TC" || k == "NCCL_IB_SL") {
        disagreed.push_back(k);
      } else {
        return makeError(ErrorCode::kInvalidConfig,
                         fmt::format("pool {} sets {}, which another pool of the same request "
                                     "sets differently",
                                     pool->config.fullName(), k));
      }
    }
  }
  for (const std::string& k : disagreed) out.erase(k);
  if (by_pool.size() > 1) {
    if (std::string gdr = gdrLevel(all); gdr.empty()) {
      out.erase(std::string(kGdr));
    } else {
      out[std::string(kGdr)] = gdr;
    }
  }
  return out;
}

}  // namespace rdmanet::dp
