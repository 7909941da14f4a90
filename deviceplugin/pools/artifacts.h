#pragma once
// Files the plugin writes for other node components, always atomically (common/os/atomic_file.h:
// a reader never sees half a file), mode 0600, creating missing directories 0700:
// - a CDI spec per pool (--cdi), read by the container runtime for `cdi_devices`, through the
//   one CDI encoder (pools/cdi.h);
// - device-info-spec 1.1.0 files per allocated device, read by Multus and the CNI
//   (<devinfo-dir>/<prefix>-<name>-<id>-device.json, the path network-attachment-definition-client
//   computes: '/' in the resource name becomes '-').

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/base/result.h"
#include "deviceplugin/pools/allocate.h"
#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {

inline constexpr std::string_view kDeviceInfoVersion = "1.1.0";

// CDI spec of a pool: kind "<prefix>/<name>", one device per pool device named by its ID, with
// the device nodes of its RDMA device (with their major/minor) plus rdma_cm.
nlohmann::json cdiSpec(const Pool& pool);
std::string cdiSpecFileName(const PoolConfig& cfg);  // "rdmanet-rdma-vf.json"
Status writeCdiSpec(const std::filesystem::path& dir, const Pool& pool);
// Removes a pool's CDI spec; a missing file is fine.
void removeCdiSpec(const std::filesystem::path& dir, const PoolConfig& cfg);

// {"type": "pci", "version": "1.1.0", "pci": {"pci-address", "pf-pci-address", "rdma-device"}}.
nlohmann::json deviceInfo(const PoolDevice& d);
std::string deviceInfoFileName(const PoolConfig& cfg, const std::string& id);
Status writeDeviceInfo(const std::filesystem::path& dir, const PoolConfig& cfg,
                       const PoolDevice& d);

}  // namespace rdmanet::dp
