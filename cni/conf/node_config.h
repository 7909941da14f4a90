#pragma once
// The node's own settings for the CNI: what its admin decides and no network may, such as where
// kubelet keeps its device checkpoint and beneath which roots a network's paths must stay.
//
// Read from "<state dir>/node.conf" (a JSON object; the state dir is root's, 0700, and no
// netconf names it), every key optional:
//   kubeletCheckpoint    kubelet's device-manager checkpoint (kubelet_checkpoint.h)
//   devinfoRoot          where runtimeConfig.CNIDeviceInfoFile must be (Multus's device-info dir)
//   logRoot              where logFile must be
//   podInfoRoot          where podInfoDir must be (rdmanet's run dir)
//   draDevicesRoot       where draDevicesDir must be (rdmanet's run dir: the chart's
//                        /var/run/rdmanet/dra-devices is beneath it)
//   logMaxBytes          a log file at or above this is emptied before the next line
//   ipamTimeoutMs        how long an IPAM delegate may run before it is killed (1..3600000)
// Without the file, the defaults below hold: they are right for any kubelet (its device-plugins
// dir does not follow --root-dir) and the chart. Tests point them at their own directories.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>

#include "common/base/result.h"

namespace rdmanet::cni {

struct NodeConfig {
  std::string kubelet_checkpoint = "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint";
  std::string devinfo_root = "/var/run/k8s.cni.cncf.io/devinfo";
  std::string log_root = "/var/log";
  std::string pod_info_root = "/var/run/rdmanet";
  std::string dra_devices_root = "/var/run/rdmanet";
  size_t log_max_bytes = 16u << 20;
  std::chrono::milliseconds ipam_timeout{std::chrono::seconds(60)};
};

inline constexpr const char* kNodeConfigFile = "node.conf";

// The node config of `state_dir`: the defaults when the file is missing. Error 7 naming the file
// and the key when it is not a JSON object of the keys above with their types (paths absolute,
// numbers positive); error 5 when it cannot be read.
Result<NodeConfig> loadNodeConfig(const std::filesystem::path& state_dir);

}  // namespace rdmanet::cni
