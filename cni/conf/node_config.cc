#include "cni/conf/node_config.h"

#include <fmt/format.h>

#include "cni/conf/json_util.h"
#include "common/os/read_file.h"

namespace rdmanet::cni {
namespace {

constexpr size_t kMaxNodeConfigBytes = 64u << 10;

Status absolutePath(const json& doc, const char* key, std::string& out) {
  RDMANET_ASSIGN_OR_RETURN(auto v, optString(doc, key));
  if (!v) return okStatus();
  if (v->empty() || v->front() != '/' || v->find("/../") != std::string::npos) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("\"{}\" must be an absolute path", key));
  }
  out = *v;
  return okStatus();
}

}  // namespace

Result<NodeConfig> loadNodeConfig(const std::filesystem::path& state_dir) {
  NodeConfig c;
  const std::filesystem::path file = state_dir / kNodeConfigFile;
  RDMANET_ASSIGN_OR_RETURN(auto text, readFile(file, kMaxNodeConfigBytes));
  if (!text) return c;
  auto parsed = [&]() -> Result<NodeConfig> {
    RDMANET_ASSIGN_OR_RETURN(json doc, parseJson(*text));
    if (!doc.is_object()) return makeError(ErrorCode::kInvalidConfig, "not a JSON object");
    RDMANET_RETURN_IF_ERROR(absolutePath(doc, "kubeletCheckpoint", c.kubelet_checkpoint));
    RDMANET_RETURN_IF_ERROR(absolutePath(doc, "devinfoRoot", c.devinfo_root));
    RDMANET_RETURN_IF_ERROR(absolutePath(doc, "logRoot", c.log_root));
    RDMANET_RETURN_IF_ERROR(absolutePath(doc, "podInfoRoot", c.pod_info_root));
    RDMANET_RETURN_IF_ERROR(absolutePath(doc, "draDevicesRoot", c.dra_devices_root));
    RDMANET_ASSIGN_OR_RETURN(auto max, optInt(doc, "logMaxBytes", 4096, int64_t{1} << 40));
    if (max) c.log_max_bytes = static_cast<size_t>(*max);
    RDMANET_ASSIGN_OR_RETURN(auto ms, optInt(doc, "ipamTimeoutMs", 1, 3'600'000));
    if (ms) c.ipam_timeout = std::chrono::milliseconds(*ms);
    return c;
  }();
  if (!parsed.ok()) return parsed.error().context(file.string());
  return parsed;
}

}  // namespace rdmanet::cni
