#include "deviceplugin/dra/kubelet/claim_checkpoint.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/json/json_dump.h"
#include "common/os/atomic_file.h"
#include "common/os/read_file.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kVersion = 1;
// A claim's entry is well under 1 KiB and a node holds at most a few thousand: the bound only
// keeps a corrupt file from being read whole.
constexpr size_t kMaxCheckpointBytes = 64 << 20;

json toJson(const PreparedClaim& c) {
  json devs = json::array();
  for (const PreparedDevice& d : c.devices) {
    devs.push_back({{"requestNames", d.request_names},
                    {"poolName", d.pool_name},
                    {"deviceName", d.device_name},
                    {"cdiDeviceIDs", d.cdi_device_ids}});
  }
  json out = {{"namespace", c.ref.ns},
              {"name", c.ref.name},
              {"cdiSpec", c.cdi_spec.string()},
              {"devices", devs}};
  if (!c.pods.empty()) out["pods"] = c.pods;
  return out;
}

PreparedClaim fromJson(const std::string& uid, const json& j) {
  PreparedClaim c;
  c.ref = {.ns = j.at("namespace").get<std::string>(),
           .uid = uid,
           .name = j.at("name").get<std::string>()};
  c.cdi_spec = j.at("cdiSpec").get<std::string>();
  for (const json& d : j.at("devices")) {
    c.devices.push_back({.request_names = d.at("requestNames").get<std::vector<std::string>>(),
                         .pool_name = d.at("poolName").get<std::string>(),
                         .device_name = d.at("deviceName").get<std::string>(),
                         .cdi_device_ids = d.at("cdiDeviceIDs").get<std::vector<std::string>>()});
  }
  if (j.contains("pods")) c.pods = j.at("pods").get<std::vector<std::string>>();
  return c;
}

}  // namespace

Status ClaimCheckpoint::load() {
  claims_.clear();
  RDMANET_ASSIGN_OR_RETURN(auto text, readFile(file_, kMaxCheckpointBytes));
  if (!text) return okStatus();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return makeError(ErrorCode::kDecodeFailure, fmt::format("{} is not JSON", file_.string()));
  }
  try {
    if (j.at("version").get<int>() != kVersion) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("{}: unknown version {}", file_.string(), dumpJson(j["version"])));
    }
    std::map<std::string, PreparedClaim> claims;
    for (const auto& [uid, c] : j.at("claims").items()) claims[uid] = fromJson(uid, c);
    claims_ = std::move(claims);
  } catch (const json::exception& e) {
    return makeError(ErrorCode::kInvalidConfig, fmt::format("{}: {}", file_.string(), e.what()));
  }
  return okStatus();
}

const PreparedClaim* ClaimCheckpoint::find(const std::string& uid) const {
  auto it = claims_.find(uid);
  return it == claims_.end() ? nullptr : &it->second;
}

Status ClaimCheckpoint::save(const std::map<std::string, PreparedClaim>& claims) const {
  json all = json::object();
  for (const auto& [uid, c] : claims) all[uid] = toJson(c);
  return writeFileAtomic(file_, dumpJson(json{{"version", kVersion}, {"claims", all}}, 1) + "\n");
}

Status ClaimCheckpoint::put(PreparedClaim claim) {
  auto next = claims_;
  std::string uid = claim.ref.uid;
  next[uid] = std::move(claim);
  RDMANET_RETURN_IF_ERROR(save(next));
  claims_ = std::move(next);
  return okStatus();
}

Status ClaimCheckpoint::erase(const std::string& uid) {
  if (!claims_.count(uid)) return okStatus();
  auto next = claims_;
  next.erase(uid);
  RDMANET_RETURN_IF_ERROR(save(next));
  claims_ = std::move(next);
  return okStatus();
}

}  // namespace rdmanet::dp
