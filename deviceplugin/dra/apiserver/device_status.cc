#include "deviceplugin/dra/apiserver/device_status.h"

#include <fmt/format.h>

#include <set>
#include <tuple>
#include <vector>

namespace rdmanet::dra {

using nlohmann::json;

namespace {

constexpr std::string_view kReady = "Ready";

std::string str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

const json* readyCondition(const json* entry) {
  if (entry == nullptr || !entry->is_object()) return nullptr;
  const auto it = entry->find("conditions");
  if (it == entry->end() || !it->is_array()) return nullptr;
  for (const json& c : *it) {
    if (str(c, "type") == kReady) return &c;
  }
  return nullptr;
}

struct ResultKey {
  std::string device;
  std::string share_id;
  bool operator<(const ResultKey& o) const {
    return std::tie(device, share_id) < std::tie(o.device, o.share_id);
  }
};

// The allocation results of ours: (device, shareID) of driver/pool for a device in `owned`.
std::vector<ResultKey> ourResults(const kube::ResourceClaim& claim, const std::string& driver,
                                  const dp::OwnedDevices& owned) {
  std::vector<ResultKey> out;
  for (const kube::DeviceAllocationResult& r : claim.results) {
    if (r.driver != driver || r.pool != owned.pool) continue;
    if (owned.devices.contains(r.device)) out.push_back({r.device, r.share_id.value_or("")});
  }
  return out;
}

}  // namespace

std::string failureReason(int cni_code) {
  switch (static_cast<ErrorCode>(cni_code)) {
    case ErrorCode::kIncompatibleVersion:
    case ErrorCode::kUnsupportedField:
    case ErrorCode::kInvalidEnv:
    case ErrorCode::kDecodeFailure:
    case ErrorCode::kInvalidConfig:
      return "InvalidConfiguration";
    case ErrorCode::kContainerUnknown:
      return "NetworkNamespaceNotFound";
    case ErrorCode::kIoFailure:
      return "IOFailure";
    case ErrorCode::kTryAgainLater:
      return "DeviceBusy";
    case ErrorCode::kDeviceNotFound:
      return "DeviceNotFound";
    case ErrorCode::kNetlinkFailure:
      return "NetlinkFailure";
    case ErrorCode::kNetnsFailure:
      return "NetworkNamespaceFailure";
    case ErrorCode::kRdmaFailure:
      return "RDMAFailure";
    default:
      return "AddFailed";  // IPAM's own codes and anything unexpected
  }
}

json deviceStatusEntry(const std::string& driver, const std::string& pool,
                       const std::string& device, const std::string& share_id,
                       const NetReport& report, const json* previous, const std::string& now) {
  const std::string status = report.ready() ? "True" : "False";
  json cond = {{"type", kReady}, {"status", status}};
  if (report.ready()) {
    cond["reason"] = "InterfaceReady";
    cond["message"] =
        fmt::format("{} is configured in the pod's network namespace", report.interface_name);
  } else {
    cond["reason"] = failureReason(*report.error_code);
    cond["message"] = fmt::format("CNI ADD of {} failed (error {}): {}", report.interface_name,
                                  *report.error_code, report.error_message);
  }
  const json* old = readyCondition(previous);
  cond["lastTransitionTime"] =
      old != nullptr && str(*old, "status") == status && !str(*old, "lastTransitionTime").empty()
          ? str(*old, "lastTransitionTime")
          : now;
  json entry = {{"driver", driver}, {"pool", pool}, {"device", device}};
  if (!share_id.empty()) entry["shareID"] = share_id;
  entry["conditions"] = json::array({std::move(cond)});
  if (report.ready()) {
    json nd = {{"interfaceName", report.interface_name}, {"ips", report.ips}};
    if (!report.hardware_address.empty()) nd["hardwareAddress"] = report.hardware_address;
    entry["networkData"] = std::move(nd);
  }
  return entry;
}

json mergeDeviceStatuses(const kube::ResourceClaim& claim, const std::string& driver,
                         const dp::OwnedDevices& owned,
                         const std::map<std::string, NetReport>& reports, const std::string& now) {
  // What ours should be, by allocation result.
  std::map<ResultKey, const NetReport*> want;
  for (const ResultKey& k : ourResults(claim, driver, owned)) {
    if (const auto it = reports.find(k.device); it != reports.end()) want[k] = &it->second;
  }
  json out = json::array();
  std::set<ResultKey> placed;
  for (const kube::AllocatedDeviceStatus& e : claim.devices) {
    const bool ours =
        e.driver == driver && e.pool == owned.pool && owned.devices.contains(e.device);
    if (!ours) {
      out.push_back(*e.raw);
      continue;
    }
    const ResultKey k{e.device, e.share_id.value_or("")};
    const auto it = want.find(k);
    if (it == want.end() || placed.contains(k)) continue;  // no report (or a duplicate): drop
    out.push_back(
        deviceStatusEntry(driver, owned.pool, k.device, k.share_id, *it->second, e.raw, now));
    placed.insert(k);
  }
  for (const auto& [k, report] : want) {
    if (placed.contains(k)) continue;
    out.push_back(
        deviceStatusEntry(driver, owned.pool, k.device, k.share_id, *report, nullptr, now));
  }
  return out;
}

}  // namespace rdmanet::dra
