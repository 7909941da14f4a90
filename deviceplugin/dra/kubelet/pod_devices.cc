#include "deviceplugin/dra/kubelet/pod_devices.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "common/dra/net_report.h"
#include "common/json/json_dump.h"
#include "common/kube/names.h"
#include "common/os/atomic_file.h"
#include "common/os/make_dirs.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kSuffix = ".json";

std::string recordName(const std::string& claim_uid) { return claim_uid + std::string(kSuffix); }

// The devices of a prepared claim, as the CNI matches them: the pool's resource name and the
// function's PCI address. Devices no longer in `inv` are left out (the record would name a
// function the CNI cannot find anyway).
json devicesOf(const PreparedClaim& claim, const DeviceSnapshot& inv) {
  json out = json::array();
  for (const PreparedDevice& d : claim.devices) {
    const NodeDevice* nd = inv.find(d.device_name);
    // An admin-access device is the pod's to monitor, never to attach: the CNI must not find it.
    if (nd == nullptr || d.admin_access) continue;
    out.push_back({{"request", d.request_names.empty() ? "" : d.request_names.front()},
                   {"resourceName", nd->pool},
                   {"pciAddress", nd->device.pci.str()},
                   {"device", d.device_name}});
  }
  return out;
}

// The ownerReferences entry of the Pod that controls the claim; null when none does.
const json* controllingPod(const json& claim) {
  if (!claim.is_object() || !claim.contains("metadata") || !claim["metadata"].is_object()) {
    return nullptr;
  }
  const json& meta = claim["metadata"];
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return nullptr;
  for (const json& o : meta["ownerReferences"]) {
    if (o.is_object() && o.value("kind", "") == "Pod" && o.value("apiVersion", "") == "v1" &&
        o.value("controller", false)) {
      return &o;
    }
  }
  return nullptr;
}

}  // namespace

std::set<std::string> reservedPods(const json& claim) {
  std::set<std::string> out;
  const json* status = claim.is_object() && claim.contains("status") ? &claim["status"] : nullptr;
  if (status == nullptr || !status->is_object() || !status->contains("reservedFor")) return out;
  const json& rf = (*status)["reservedFor"];
  if (!rf.is_array()) return out;
  for (const json& r : rf) {
    if (!r.is_object() || r.value("resource", "") != "pods" || !r.value("apiGroup", "").empty()) {
      continue;
    }
    const std::string uid = r.value("uid", "");
    if (isValidClaimUid(uid)) out.insert(uid);  // the same UID shape as a claim's
  }
  return out;
}

bool ownedByPod(const json& claim) { return controllingPod(claim) != nullptr; }

std::optional<ClaimPod> onePodOf(const json& claim) {
  // Only well-formed names and UIDs: they go into an Event's involvedObject.
  const auto pod = [](const json& ref) -> std::optional<ClaimPod> {
    ClaimPod p{.name = ref.value("name", ""), .uid = ref.value("uid", "")};
    if (!kube::isDnsSubdomain(p.name) || !isValidClaimUid(p.uid)) return std::nullopt;
    return p;
  };
  if (!claim.is_object()) return std::nullopt;
  if (const json* owner = controllingPod(claim)) return pod(*owner);
  if (!claim.contains("status") || !claim["status"].is_object() ||
      !claim["status"].contains("reservedFor") || !claim["status"]["reservedFor"].is_array()) {
    return std::nullopt;
  }
  std::optional<ClaimPod> only;
  for (const json& r : claim["status"]["reservedFor"]) {
    if (!r.is_object() || r.value("resource", "") != "pods" || !r.value("apiGroup", "").empty()) {
      continue;
    }
    if (only) return std::nullopt;  // several pods
    only = pod(r);
    if (!only) return std::nullopt;
  }
  return only;
}

Status writePodDevices(const fs::path& dir, const std::set<std::string>& pods,
                       const PreparedClaim& claim, const DeviceSnapshot& inv) {
  json devices = devicesOf(claim, inv);
  if (devices.empty()) return okStatus();  // nothing the CNI may attach: no record
  const json doc = {
      {"claim", {{"namespace", claim.ref.ns}, {"name", claim.ref.name}, {"uid", claim.ref.uid}}},
      {"devices", std::move(devices)}};
  const std::string text = dumpJson(doc, 2) + "\n";
  for (const std::string& pod : pods) {
    const fs::path pod_dir = dir / pod;
    RDMANET_RETURN_IF_ERROR(makeDirs(pod_dir));
    RDMANET_RETURN_IF_ERROR(writeFileAtomic(pod_dir / recordName(claim.ref.uid), text,
                                            AtomicWriteOptions{.mode = 0644, .durable = false}));
  }
  return okStatus();
}

Status removePodDevices(const fs::path& dir, const std::string& claim_uid) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory(ec) || e.is_symlink(ec)) continue;
    // The claim's network reports first (the CNI's, beside the record): the claim is gone from
    // the node, and so is what the CNI said about its devices.
    std::error_code ec2;
    for (const auto& f : fs::directory_iterator(e.path(), ec2)) {
      const auto key = dra::parseNetReportName(f.path().filename().string());
      if (key && key->claim_uid == claim_uid) (void)::unlink(f.path().c_str());
    }
    const fs::path rec = e.path() / recordName(claim_uid);
    if (::unlink(rec.c_str()) != 0 && errno != ENOENT) {
      return errnoError(ErrorCode::kIoFailure, errno,
                        fmt::format("cannot remove {}", rec.string()));
    }
    (void)::rmdir(e.path().c_str());  // only when empty: the pod's other claims stay
  }
  return okStatus();
}

void sweepPodDevices(const fs::path& dir, const std::set<std::string>& prepared) {
  std::error_code ec;
  for (const auto& pod : fs::directory_iterator(dir, ec)) {
    if (!pod.is_directory(ec) || pod.is_symlink(ec)) continue;
    std::error_code ec2;
    for (const auto& rec : fs::directory_iterator(pod.path(), ec2)) {
      const std::string name = rec.path().filename().string();
      if (const auto key = dra::parseNetReportName(name); key) {
        if (!prepared.contains(key->claim_uid)) (void)::unlink(rec.path().c_str());
        continue;
      }
      if (!name.ends_with(kSuffix)) continue;
      const std::string uid = name.substr(0, name.size() - kSuffix.size());
      if (!prepared.contains(uid)) (void)::unlink(rec.path().c_str());
    }
    (void)sweepAtomicTemps(pod.path());
    (void)::rmdir(pod.path().c_str());
  }
}

}  // namespace rdmanet::dp
