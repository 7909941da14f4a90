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
// function's PCI address, and the share of its port the pool gives it (the CNI caps the VF's
// max_tx_rate at it). Devices no longer in `inv` are left out (the record would name a function
// the CNI cannot find anyway).
json devicesOf(const PreparedClaim& claim, const DeviceSnapshot& inv) {
  json out = json::array();
  for (const PreparedDevice& d : claim.devices) {
    const NodeDevice* nd = inv.find(d.device_name);
    // An admin-access device is the pod's to monitor, never to attach: the CNI must not find it.
    if (nd == nullptr || d.admin_access) continue;
    json entry = {{"request", d.request_names.empty() ? "" : d.request_names.front()},
                  {"resourceName", nd->pool},
                  {"pciAddress", nd->device.pci.str()},
                  {"device", d.device_name}};
    const Pool* pool = inv.pool(nd->pool);
    // What the scheduler granted this claim of a shared device comes first: it is this claim's
    // own; a pool's vfBandwidthMbps is what any of its VFs stands for.
    if (d.max_tx_rate_mbps) {
      entry["maxTxRateMbps"] = *d.max_tx_rate_mbps;
    } else if (pool != nullptr && pool->config.vf_bandwidth_mbps) {
      entry["maxTxRateMbps"] = *pool->config.vf_bandwidth_mbps;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// The ownerReferences entry of the Pod that controls the claim; null when none does.
const kube::OwnerReference* controllingPod(const kube::ResourceClaim& claim) {
  for (const kube::OwnerReference& o : claim.metadata.owner_references) {
    if (o.kind == "Pod" && o.api_version == "v1" && o.controller) return &o;
  }
  return nullptr;
}

bool isPod(const kube::ConsumerReference& r) { return r.resource == "pods" && r.api_group.empty(); }

}  // namespace

std::set<std::string> reservedPods(const kube::ResourceClaim& claim) {
  std::set<std::string> out;
  for (const kube::ConsumerReference& r : claim.reserved_for) {
    if (isPod(r) && isValidClaimUid(r.uid)) out.insert(r.uid);  // the same UID shape as a claim's
  }
  return out;
}

bool ownedByPod(const kube::ResourceClaim& claim) { return controllingPod(claim) != nullptr; }

std::optional<ClaimPod> onePodOf(const kube::ResourceClaim& claim) {
  // Only well-formed names and UIDs: they go into an Event's involvedObject.
  const auto pod = [](const std::string& name, const std::string& uid) -> std::optional<ClaimPod> {
    if (!kube::isDnsSubdomain(name) || !isValidClaimUid(uid)) return std::nullopt;
    return ClaimPod{.name = name, .uid = uid};
  };
  if (const kube::OwnerReference* owner = controllingPod(claim)) {
    return pod(owner->name, owner->uid);
  }
  std::optional<ClaimPod> only;
  for (const kube::ConsumerReference& r : claim.reserved_for) {
    if (!isPod(r)) continue;
    if (only) return std::nullopt;  // several pods
    only = pod(r.name, r.uid);
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
