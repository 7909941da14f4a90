#pragma once
// Which devices kubelet's device manager allocated to a pod, from its checkpoint.
//
// Kubelet writes /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint at every Allocate,
// before it creates the pod's sandbox and so before the CNI ADD of the pod's networks. The path
// is a constant of the device-plugin API: it does not follow kubelet's --root-dir. The CNI must
// not speak gRPC (pod-resources), and this file holds the same answer. Its format, JSON:
//   {"Data": {"PodDeviceEntries": [{"PodUID": "...", "ContainerName": "...",
//             "ResourceName": "rdma/vf", "DeviceIDs": {"<NUMA node>": ["<id>", ...]},
//             "AllocResp": "<base64>"}, ...], "RegisteredDevices": {...}}, "Checksum": ...}
// (kubelets before 1.20 wrote DeviceIDs as a plain list: read too). It is kubelet's file, but
// read as untrusted input: bounded in size, depth and string length, with every field's type
// checked, and nothing but the pod's entries looked at.

#include <cstddef>
#include <string>

#include "common/base/pci_address.h"
#include "common/base/result.h"

namespace rdmanet::cni {

inline constexpr const char* kKubeletCheckpoint =
    "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint";
// A node of 1016 VFs, each allocated to a pod with its AllocResp, stays far below this.
inline constexpr size_t kMaxKubeletCheckpointBytes = 32u << 20;

// Whether the checkpoint at `path` lists `device` among the device IDs of pod `pod_uid` (any
// container, any resource; IDs compared as PCI addresses, so "0000:81:10.2" matches however the
// device plugin spelled it). A missing file is false. Error 5 when it cannot be read or is over
// the size limit; a file that does not parse, or entries of the wrong shape, count as not
// listing it (false), with `why` set to what was wrong.
Result<bool> kubeletAllocated(const std::string& path, const std::string& pod_uid,
                              const PciAddress& device, std::string* why = nullptr);

}  // namespace rdmanet::cni
