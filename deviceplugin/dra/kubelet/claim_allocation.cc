#include "deviceplugin/dra/kubelet/claim_allocation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/kube/names.h"
#include "deviceplugin/dra/dra_device.h"

namespace rdmanet::dp {

namespace {

// A request name as the API server allows it: a DNS label, or "<request>/<subrequest>".
bool isRequestName(std::string_view r) {
  const size_t slash = r.find('/');
  if (slash == std::string_view::npos) return kube::isDnsLabel(r);
  return kube::isDnsLabel(r.substr(0, slash)) && kube::isDnsLabel(r.substr(slash + 1));
}

}  // namespace

std::string_view baseRequest(std::string_view request) {
  return request.substr(0, request.find('/'));
}

bool isValidClaimUid(std::string_view uid) {
  return !uid.empty() && uid.size() <= 63 && std::all_of(uid.begin(), uid.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
  });
}

Result<std::vector<AllocatedDevice>> ourAllocation(const kube::ResourceClaim& claim,
                                                   const ClaimRef& ref, const std::string& driver,
                                                   const std::string& node) {
  const std::string where = fmt::format("ResourceClaim {}/{}", ref.ns, ref.name);
  const std::string& uid = claim.metadata.uid;
  if (uid != ref.uid) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{} has UID {}, kubelet asked for {} (deleted and re-created?)",
                                 where, uid.empty() ? "<none>" : uid, ref.uid));
  }
  if (!claim.allocated) {
    return makeError(ErrorCode::kInvalidConfig, fmt::format("{} is not allocated", where));
  }
  std::vector<AllocatedDevice> out;
  int other_driver = 0, other_pool = 0;
  for (const kube::DeviceAllocationResult& r : claim.results) {
    if (r.driver != driver) {
      ++other_driver;
      continue;
    }
    if (r.pool != node) {
      ++other_pool;
      continue;
    }
    AllocatedDevice d{.request = r.request, .device = r.device, .admin_access = r.admin_access};
    if (!kube::isDnsLabel(d.device)) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("{}: malformed device name in an allocation result", where));
    }
    // It goes into a CDI device name and the checkpoint.
    if (!isRequestName(d.request)) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("{}: malformed request name in an allocation result", where));
    }
    if (auto it = r.consumed_capacity.find(std::string(dra::kBandwidthCapacity));
        it != r.consumed_capacity.end()) {
      if (it->second < 0) {
        return makeError(ErrorCode::kInvalidConfig,
                         fmt::format("{}: negative {} consumed in an allocation result", where,
                                     dra::kBandwidthCapacity));
      }
      // bit/s to Mbit/s, rounded up: a share is never set below what the scheduler granted;
      // at least 1, the least a rate limit can say.
      d.bandwidth_mbps =
          std::max<int64_t>(1, it->second / 1'000'000 + (it->second % 1'000'000 != 0));
    }
    out.push_back(std::move(d));
  }
  if (out.empty()) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{} has no device of driver {} in pool {} ({} result(s) of other "
                                 "drivers, {} of other pools)",
                                 where, driver, node, other_driver, other_pool));
  }
  return out;
}

}  // namespace rdmanet::dp
