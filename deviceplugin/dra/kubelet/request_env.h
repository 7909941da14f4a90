#pragma once
// The environment a container gets for one claim request: the device plugin's Allocate env
// (buildAllocation, pools/allocate.h) over all of the request's devices, so PCIDEVICE_* and
// NCCL_IB_HCA name every NIC the request got, as comma lists, exactly as Allocate does for a
// container that asks for `rdma/vf: 8`.
//
// A request's devices normally come from one pool: the chart's DeviceClass per pool selects
// `rdmanet.io/pool`, and a request's own selectors only narrow its class. A custom DeviceClass
// (driver only) can span pools; then each pool's share is built on its own, as Allocate would be
// called once per resource, and merged:
// - per-pool names (PCIDEVICE_<PREFIX>_<POOL>, _INFO, _POD_INFO) each keep their pool's value;
// - NCCL_IB_HCA lists every pool's HCAs;
// - NCCL_NET_GDR_LEVEL is computed over all devices (the farthest one decides);
// - NCCL_IB_TC / NCCL_IB_SL are kept where the pools agree and left out where they do not
//   (NCCL applies one traffic class to every HCA: no value is right for both pools);
// - any other name two pools set differently (two pools whose env names collide) is an error.

#include <map>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

// `devs` are the request's devices in `inv`, each once. Errors as buildAllocation's (an unhealthy
// device is 11), 7 for the collision above, 999 when a device's pool is not in `inv`.
Result<std::map<std::string, std::string>> requestEnv(const DeviceSnapshot& inv,
                                                      const std::vector<const NodeDevice*>& devs);

}  // namespace rdmanet::dp
