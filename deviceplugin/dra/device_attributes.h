#pragma once
// The attributes of a DRA device that follow from the pool core's view of it, without reading
// sysfs: what both DRA sides say about a device, so that a container's device metadata
// (kubelet/device_metadata.h) names it as the node's ResourceSlice does (apiserver/
// slice_devices.h, which adds pcieRoot and reads numaNode again from sysfs).
//
//   resource.kubernetes.io/pciBusID   string  "0000:81:00.2"
//   resource.kubernetes.io/numaNode   int     when known (>= 0)
//   k8s.cni.cncf.io/deviceID          string  the PCI address (Multus's DRA support)
//   k8s.cni.cncf.io/resourceName      string  the pool, "rdma/vf"
//   rdmanet.io/...                    rdmanet's own, listed in apiserver/slice_devices.h
// Attributes whose value is unknown are left out rather than given empty.

#include <map>
#include <string>

#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

std::map<std::string, dra::AttributeValue> deviceAttributes(const NodeDevice& d,
                                                            const PoolConfig& pool);

}  // namespace rdmanet::dp
