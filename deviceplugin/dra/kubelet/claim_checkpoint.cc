#include "deviceplugin/dra/kubelet/claim_checkpoint.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/base/clock.h"
#include "common/json/json_access.h"
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
    json dev = {{"requestNames", d.request_names},
                {"poolName", d.pool_name},
                {"deviceName", d.device_name},
                {"cdiDeviceIDs", d.cdi_device_ids}};
    if (d.admin_access) dev["adminAccess"] = true;
    if (d.max_tx_rate_mbps) dev["maxTxRateMbps"] = *d.max_tx_rate_mbps;
    if (!d.subrequest.empty()) dev["subrequest"] = d.subrequest;
    devs.push_back(std::move(dev));
  }
  json out = {{"namespace", c.ref.ns},
              {"name", c.ref.name},
              {"cdiSpec", c.cdi_spec.string()},
              {"devices", devs}};
  if (!c.pods.empty()) out["pods"] = c.pods;
  if (c.pod_owned) out["podOwned"] = true;
  if (c.device_metadata) out["deviceMetadata"] = true;
  if (c.pod_claim_name) out["podClaimName"] = *c.pod_claim_name;
  return out;
}

Result<PreparedClaim> fromJson(const std::string& uid, const json& j) {
  PreparedClaim c;
  c.ref = {.ns = j.at("namespace").get<std::string>(),
           .uid = uid,
           .name = j.at("name").get<std::string>()};
  c.cdi_spec = j.at("cdiSpec").get<std::string>();
  for (const json& d : j.at("devices")) {
    RDMANET_ASSIGN_OR_RETURN(auto rate,
                             optInt(d, "maxTxRateMbps", 1, std::numeric_limits<int64_t>::max()));
    c.devices.push_back({.request_names = d.at("requestNames").get<std::vector<std::string>>(),
                         .pool_name = d.at("poolName").get<std::string>(),
                         .device_name = d.at("deviceName").get<std::string>(),
                         .cdi_device_ids = d.at("cdiDeviceIDs").get<std::vector<std::string>>(),
                         .admin_access = d.value("adminAccess", false),
                         .max_tx_rate_mbps = rate,
                         .subrequest = d.value("subrequest", std::string())});
  }
  if (j.contains("pods")) c.pods = j.at("pods").get<std::vector<std::string>>();
  c.pod_owned = j.value("podOwned", false);
  c.device_metadata = j.value("deviceMetadata", false);
  if (j.contains("podClaimName")) c.pod_claim_name = j.at("podClaimName").get<std::string>();
  return c;
}

}  // namespace

Result<std::map<std::string, PreparedClaim>> ClaimCheckpoint::parse(const fs::path& from,
                                                                    bool& exists) const {
  exists = false;
  RDMANET_ASSIGN_OR_RETURN(auto text, readFile(from, kMaxCheckpointBytes));
  std::map<std::string, PreparedClaim> claims;
  if (!text) return claims;
  exists = true;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return makeError(ErrorCode::kDecodeFailure, fmt::format("{} is not JSON", from.string()));
  }
  try {
    const json* version = jsonMember(j, "version");
    if (version == nullptr || !version->is_number_integer() || *version != kVersion) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("{}: unknown version {}", from.string(), dumpJson(j["version"])));
    }
    for (const auto& [uid, c] : j.at("claims").items()) {
      auto claim = fromJson(uid, c);
      if (!claim.ok()) return claim.error().context(from.string());
      claims[uid] = std::move(*claim);
    }
  } catch (const json::exception& e) {
    return makeError(ErrorCode::kInvalidConfig, fmt::format("{}: {}", from.string(), e.what()));
  }
  return claims;
}

Status ClaimCheckpoint::load() {
  claims_.clear();
  file_is_good_ = false;
  bool exists = false;
  RDMANET_ASSIGN_OR_RETURN(claims_, parse(file_, exists));
  file_is_good_ = exists;
  return okStatus();
}

Result<bool> ClaimCheckpoint::loadBackup() {
  bool exists = false;
  RDMANET_ASSIGN_OR_RETURN(auto claims, parse(backupFile(), exists));
  claims_ = std::move(claims);
  return exists;
}

Result<fs::path> ClaimCheckpoint::moveAside(const fs::path& path) {
  const auto now = std::chrono::system_clock::to_time_t(wallNow());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  fs::path to = fmt::format("{}.corrupt-{:04}{:02}{:02}T{:02}{:02}{:02}Z-{}", path.string(),
                            utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                            utc.tm_min, utc.tm_sec, ::getpid());
  if (::rename(path.c_str(), to.c_str()) != 0) {
    return errnoError(ErrorCode::kIoFailure, errno,
                      fmt::format("cannot move {} aside to {}", path.string(), to.string()));
  }
  (void)::chmod(to.c_str(), 0600);  // it holds what the checkpoint held: root's alone
  if (path == file_) file_is_good_ = false;
  return to;
}

const PreparedClaim* ClaimCheckpoint::find(const std::string& uid) const {
  auto it = claims_.find(uid);
  return it == claims_.end() ? nullptr : &it->second;
}

void ClaimCheckpoint::keepBackup() const {
  if (!file_is_good_) return;
  // A second name for the good file, renamed over the old backup: the rewrite that follows
  // replaces file_'s name only, so the backup keeps the content it had. The link's name is a
  // temp name of writeFileAtomic's, which the start-up sweep removes when a crash leaves it.
  const fs::path tmp = atomicTempPath(backupFile());
  (void)::unlink(tmp.c_str());
  if (::link(file_.c_str(), tmp.c_str()) != 0) return;
  (void)::rename(tmp.c_str(), backupFile().c_str());
  // When the backup already is the file (a write cut short after this step, last run), the
  // rename of one of its names onto another is a no-op that leaves both (rename(2)): drop ours.
  (void)::unlink(tmp.c_str());
}

Status ClaimCheckpoint::save(const std::map<std::string, PreparedClaim>& claims) {
  json all = json::object();
  for (const auto& [uid, c] : claims) all[uid] = toJson(c);
  keepBackup();
  RDMANET_RETURN_IF_ERROR(
      writeFileAtomic(file_, dumpJson(json{{"version", kVersion}, {"claims", all}}, 1) + "\n"));
  file_is_good_ = true;
  return okStatus();
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
