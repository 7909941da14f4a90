#include "deviceplugin/dra/kubelet/cdi_spec.h"

#include <fmt/format.h>

#include "common/os/atomic_file.h"
#include "common/os/make_dirs.h"
#include "deviceplugin/pools/artifacts.h"

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
  nlohmann::json out = nlohmann::json::array();
  for (const CdiDevice& d : devices) {
    nlohmann::json env = nlohmann::json::array();
    for (const auto& [k, v] : d.edits.envs) env.push_back(fmt::format("{}={}", k, v));
    nlohmann::json nodes = nlohmann::json::array();
    for (const DeviceNode& n : d.edits.devices) {
      nodes.push_back({{"path", n.container_path},
                       {"hostPath", n.host_path},
                       {"type", "c"},
                       {"permissions", n.permissions}});
    }
    nlohmann::json edits = {{"env", env}, {"deviceNodes", nodes}};
    for (const Mount& m : d.edits.mounts) {
      nlohmann::json opts = nlohmann::json::array({"bind"});
      if (m.read_only) opts.push_back("ro");
      edits["mounts"].push_back(
          {{"hostPath", m.host_path}, {"containerPath", m.container_path}, {"options", opts}});
    }
    out.push_back({{"name", d.name}, {"containerEdits", std::move(edits)}});
  }
  return {{"cdiVersion", kCdiVersion}, {"kind", kCdiKind}, {"devices", out}};
}

Status writeClaimCdiSpec(const fs::path& file, const std::vector<CdiDevice>& devices) {
  // --cdi-dir need not exist on a fresh node (the runtime only reads it): make it, as the
  // device-plugin front does for its CDI files.
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) {
    return errnoError(ErrorCode::kIoFailure, ec.value(),
                      fmt::format("cannot create {}", file.parent_path().string()));
  }
  // A CDI mount's source must exist when the runtime applies the spec: containerd creates a
  // missing source for a CRI mount (the device plugin's Allocate), not for a CDI one, and runc's
  // bind mount then fails the container. The only mounts are the devices' pod-info dirs, which
  // the CNI fills at ADD: a pod that holds the claim but attaches no rdmanet network (or whose
  // Multus cannot resolve the claim's device) never runs that ADD. Made here, before the spec
  // names them, 0755 as the CNI makes them; they are per device, so they stay for its next pod.
  for (const CdiDevice& d : devices) {
    for (const Mount& m : d.edits.mounts) RDMANET_RETURN_IF_ERROR(makeDirs(m.host_path));
  }
  return writeFileAtomic(file, claimCdiSpec(devices).dump(2) + "\n");
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

}  // namespace rdmanet::dp
