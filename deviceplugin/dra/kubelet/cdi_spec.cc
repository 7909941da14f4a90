#include "deviceplugin/dra/kubelet/cdi_spec.h"

#include <fmt/format.h>

#include "common/os/make_dirs.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

std::string claimSpecFileName(const std::string& claim_uid) {
  return fmt::format("rdmanet.io-rdma_{}.json", claim_uid);
}

std::string deviceCdiName(const std::string& claim_uid, const std::string& device) {
  return fmt::format("{}-{}", claim_uid, device);
}

std::string requestCdiName(const std::string& claim_uid, std::string_view request) {
  return fmt::format("{}_{}", claim_uid, request);
}

std::string cdiDeviceId(const std::string& name) { return fmt::format("{}={}", kCdiKind, name); }

nlohmann::json claimCdiSpec(const std::vector<CdiDevice>& devices) {
  return encodeCdiSpec(kCdiKind, devices);
}

Status writeClaimCdiSpec(const fs::path& file, const std::vector<CdiDevice>& devices) {
  // A CDI mount's source must exist when the runtime applies the spec: containerd creates a
  // missing source for a CRI mount (the device plugin's Allocate), not for a CDI one, and runc's
  // bind mount then fails the container. The only mounts are the devices' pod-info dirs, which
  // the CNI fills at ADD: a pod that holds the claim but attaches no rdmanet network (or whose
  // Multus cannot resolve the claim's device) never runs that ADD. Made here, before the spec
  // names them, 0755 as the CNI makes them; they are per device, so they stay for its next pod.
  for (const CdiDevice& d : devices) {
    for (const Mount& m : d.edits.mounts) RDMANET_RETURN_IF_ERROR(makeDirs(m.host_path));
  }
  return writeCdiSpecFile(file, kCdiKind, devices, {.durable = true});
}

Status removeClaimCdiSpec(const fs::path& file) {
  std::error_code ec;
  fs::remove(file, ec);
  if (ec) {
    return errnoError(ErrorCode::kIoFailure, ec.value(),
                      fmt::format("cannot remove {}", file.string()));
  }
  return okStatus();
}

int sweepClaimSpecs(const fs::path& cdi_dir, const std::set<std::string>& owned) {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cdi_dir, ec)) {
    const std::string name = e.path().filename().string();
    constexpr std::string_view kPrefix = "rdmanet.io-rdma_", kSuffix = ".json";
    if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) continue;
    const std::string uid =
        name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    if (!isValidClaimUid(uid) || claimSpecFileName(uid) != name || owned.contains(uid)) continue;
    if (removeClaimCdiSpec(e.path()).ok()) ++removed;
  }
  return removed;
}

}  // namespace rdmanet::dp
