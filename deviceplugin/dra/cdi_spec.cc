#include "deviceplugin/dra/cdi_spec.h"

#include <fmt/format.h>

#include "common/os/atomic_file.h"
#include "deviceplugin/pools/artifacts.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

std::string claimSpecFileName(const std::string& claim_uid) {
  return fmt::format("rdmanet.io-rdma_{}.json", claim_uid);
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
    out.push_back({{"name", d.name}, {"containerEdits", {{"env", env}, {"deviceNodes", nodes}}}});
  }
  return {{"cdiVersion", kCdiVersion}, {"kind", kCdiKind}, {"devices", out}};
}

Status writeClaimCdiSpec(const fs::path& file, const std::vector<CdiDevice>& devices) {
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
