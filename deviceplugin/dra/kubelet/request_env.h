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

// One allocated device, looked up once in the snapshot: the DRA device, the pool it is published
// from and its entry there. Both what a request's containers get (requestEnv) and the device's
// own CDI edits (claim_render.h) are built from it.
struct ResolvedDevice {
  const NodeDevice* node = nullptr;
  const Pool* pool = nullptr;
  const PoolDevice* device = nullptr;
};

// `d`'s pool and pool entry in `inv`. Error 999 when its pool is not in `inv`, 100 when the pool
// no longer has the device (buildAllocation's message).
Result<ResolvedDevice> resolveDevice(const DeviceSnapshot& inv, const NodeDevice& d);

// `devs` are the request's devices, each once. Errors as buildAllocation's (an unhealthy device
// is 11), 7 for the collision above.
Result<std::map<std::string, std::string>> requestEnv(const std::vector<ResolvedDevice>& devs);

}  // namespace rdmanet::dp
