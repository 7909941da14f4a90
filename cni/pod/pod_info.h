#pragma once
// What only the CNI knows, for the workload, under Multus too: Multus builds the pod's
// network-status from a fixed device-info schema and drops rdmanet's own object (GID index, PCP,
// DSCP), so the pod would never see it. Instead, for a device the rdmanet device plugin
// allocated, ADD fills the device's own host directory `<podInfoDir>/<PCI address>/`, which the
// plugin's Allocate mounts read-only into the container (at /var/run/rdmanet/<PCI address>,
// named by PCIDEVICE_<RESOURCE>_POD_INFO) before it starts:
//   rdmanet.env   KEY=VALUE lines a shell can source: NCCL_IB_GID_INDEX, NCCL_IB_TC, NCCL_IB_SL,
//                 RDMANET_IFNAME, RDMANET_IP, RDMANET_PCP, RDMANET_VLAN, RDMANET_RDMA_DEVICE, ...
//   rdmanet.json  the same facts as one JSON object
// Both are replaced atomically, 0644 (the container may run as any user; nothing in them is
// secret) in a 0755 root-owned directory. DEL removes the files; the directory stays, since a
// running container may still have it mounted, and the next ADD for the device overwrites it.

#include <nlohmann/json.hpp>
#include <string>

#include "cni/conf/result_types.h"
#include "common/base/pci_address.h"
#include "common/base/result.h"

namespace rdmanet::cni {

inline constexpr const char* kPodInfoEnvFile = "rdmanet.env";
inline constexpr const char* kPodInfoJsonFile = "rdmanet.json";

// "<root>/<pci>": the device's directory.
std::string podInfoDirFor(const std::string& root, const PciAddress& pci);

// The facts, from the device-info document (rdma_attach.h: deviceInfoJson) and ADD's result.
nlohmann::json podInfoJson(const nlohmann::json& device_info, const std::string& ifname,
                           const CniResult& result);
// The env file's text: one KEY=VALUE line per fact known; values are numbers, addresses and
// kernel names only (no quoting needed).
std::string podInfoEnv(const nlohmann::json& info);

// Creates `dir` and its missing ancestors beneath `root` (0755; the node's pod-info root,
// node_config.h: a network's podInfoDir must stay beneath it, and no component below the root may
// be a symlink, common/os/confined_path.h) and writes both files through the held directory.
// Error 7 when `dir` is not beneath `root`, 5 on a symlinked component or I/O.
Status writePodInfo(const std::string& root, const std::string& dir, const nlohmann::json& info);
// Removes both files; a missing file or directory, or one not confined beneath `root`, is left.
void removePodInfo(const std::string& root, const std::string& dir);

}  // namespace rdmanet::cni
