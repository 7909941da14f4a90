#include "cni/pod/kubelet_checkpoint.h"

#include <fmt/format.h>

#include "cni/conf/json_util.h"
#include "cni/conf/limits.h"
#include "common/os/read_file.h"

namespace rdmanet::cni {
namespace {

// The checkpoint nests six levels; AllocResp (a base64 protobuf) is the longest string.
constexpr JsonLimits kCheckpointLimits{kMaxKubeletCheckpointBytes, 16, 4u << 20};

bool idIs(const json& id, const PciAddress& device) {
  if (!id.is_string()) return false;
  auto pci = PciAddress::parse(id.get<std::string>());
  return pci.ok() && *pci == device;
}

// DeviceIDs: {"<numa>": [ids]} since kubelet 1.20, a plain [ids] before.
bool listsDevice(const json& ids, const PciAddress& device) {
  if (ids.is_array()) {
    for (const json& id : ids) {
      if (idIs(id, device)) return true;
    }
    return false;
  }
  if (!ids.is_object()) return false;
  for (const auto& [numa, list] : ids.items()) {
    if (list.is_array() && listsDevice(list, device)) return true;
  }
  return false;
}

}  // namespace

Result<bool> kubeletAllocated(const std::string& path, const std::string& pod_uid,
                              const PciAddress& device, std::string* why) {
  auto note = [&](std::string msg) {
    if (why != nullptr) *why = std::move(msg);
    return false;
  };
  // Kubelet replaces it atomically; it is a regular file of its own dir (no symlink expected).
  RDMANET_ASSIGN_OR_RETURN(auto text, readFile(path, kMaxKubeletCheckpointBytes));
  if (!text) return note(fmt::format("{} does not exist", path));
  auto doc = parseJson(*text, kCheckpointLimits);
  if (!doc.ok()) return note(fmt::format("{} does not parse: {}", path, doc.error().msg));
  if (!doc->is_object()) return note(path + " is not a JSON object");
  const json* entries = nullptr;
  if (auto d = doc->find("Data"); d != doc->end() && d->is_object()) {
    if (auto e = d->find("PodDeviceEntries"); e != d->end() && e->is_array()) entries = &*e;
  }
  if (entries == nullptr) return note(path + " has no Data.PodDeviceEntries list");
  for (const json& entry : *entries) {
    if (!entry.is_object()) continue;
    auto uid = entry.find("PodUID");
    if (uid == entry.end() || !uid->is_string() || uid->get<std::string>() != pod_uid) continue;
    if (auto ids = entry.find("DeviceIDs"); ids != entry.end() && listsDevice(*ids, device)) {
      return true;
    }
  }
  return note(fmt::format("{} lists no {} for pod {}", path, device.str(), pod_uid));
}

}  // namespace rdmanet::cni
