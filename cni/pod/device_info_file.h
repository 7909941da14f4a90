#pragma once
// The device-info file (runtimeConfig.CNIDeviceInfoFile) on disk, confined beneath the node's
// device-info root (node_config.h: Multus's /var/run/k8s.cni.cncf.io/devinfo), whatever path a
// network or its runtimeConfig names (common/os/confined_path.h).

#include <nlohmann/json.hpp>
#include <string>

#include "common/base/result.h"

namespace rdmanet::cni {

// Writes `doc` to `path` atomically (0600), making missing directories beneath `root` (0755).
// Error 7 when `path` is not beneath `root`; 5 when a component is a symlink or on I/O failure.
Status writeDeviceInfo(const std::string& root, const std::string& path, const nlohmann::json& doc);
// Removes it, and dead writers' temp files beside it; quietly does nothing when `path` is not
// beneath `root` or its directory is gone or reached through a symlink. Returns how many temp
// files went.
int removeDeviceInfo(const std::string& root, const std::string& path, bool file_too = true);

}  // namespace rdmanet::cni
