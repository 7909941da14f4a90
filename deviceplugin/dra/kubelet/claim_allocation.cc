#include "deviceplugin/dra/kubelet/claim_allocation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/kube/names.h"

namespace rdmanet::dp {

namespace {

using nlohmann::json;

// The string at `key` of object `j`, "" when absent or not a string.
std::string str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

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

Result<std::vector<AllocatedDevice>> ourAllocation(const json& claim, const ClaimRef& ref,
                                                   const std::string& driver,
                                                   const std::string& node) {
  const std::string where = fmt::format("ResourceClaim {}/{}", ref.ns, ref.name);
  const json* meta = claim.is_object() && claim.contains("metadata") ? &claim["metadata"] : nullptr;
  const std::string uid = meta ? str(*meta, "uid") : "";
  if (uid != ref.uid) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{} has UID {}, kubelet asked for {} (deleted and re-created?)",
                                 where, uid.empty() ? "<none>" : uid, ref.uid));
  }
  const json* results = nullptr;
  if (auto st = claim.find("status"); st != claim.end() && st->is_object()) {
    if (auto al = st->find("allocation"); al != st->end() && al->is_object()) {
      if (auto dv = al->find("devices"); dv != al->end() && dv->is_object()) {
        if (auto r = dv->find("results"); r != dv->end() && r->is_array()) results = &*r;
      }
    }
  }
  if (!results) {
    return makeError(ErrorCode::kInvalidConfig, fmt::format("{} is not allocated", where));
  }
  std::vector<AllocatedDevice> out;
  int other_driver = 0, other_pool = 0;
  for (const json& r : *results) {
    if (str(r, "driver") != driver) {
      ++other_driver;
      continue;
    }
    if (str(r, "pool") != node) {
      ++other_pool;
      continue;
    }
    const auto admin = r.find("adminAccess");
    AllocatedDevice d{
        .request = str(r, "request"),
        .device = str(r, "device"),
        .admin_access = admin != r.end() && admin->is_boolean() && admin->get<bool>()};
    if (!kube::isDnsLabel(d.device)) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("{}: malformed device name in an allocation result", where));
    }
    // It goes into a CDI device name and the checkpoint.
    if (!isRequestName(d.request)) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("{}: malformed request name in an allocation result", where));
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
