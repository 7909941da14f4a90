#pragma once
// renderClaim: what preparing a claim's allocation on this node makes, computed without I/O: the
// answer for kubelet (PreparedClaim) and the content of the claim's CDI spec. ClaimPreparer
// commits it (spec, then checkpoint) only afterwards, so the order of its writes shows in
// prepare(), and renders again from a checkpoint entry, whose devices record the allocation it
// was made from (allocationOf), to make a spec the node lost again: /var/run/cdi is a tmpfs on
// most nodes, the checkpoint is not.
//
// Per allocated device: its char devices plus rdma_cm (and pod-info mount), the device plugin's
// Allocate for that device alone (buildAllocation); per request, the env (PCIDEVICE_*, NCCL
// hints) over all of the request's devices (request_env.h), since they go to the same containers.
// Each returned device names both CDI devices (cdi_spec.h says why).

#include <filesystem>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

struct RenderOptions {
  std::string driver{};  // for messages
  std::string node{};    // the DRA pool name
  std::filesystem::path cdi_dir{};
};

struct RenderedClaim {
  PreparedClaim prepared{};
  std::vector<CdiDevice> cdi{};  // the spec's devices, for writeClaimCdiSpec(prepared.cdi_spec)
};

// Error 100 for a device that is not in `inv`; request_env's and buildAllocation's errors (11 for
// an unhealthy device) as they come.
Result<RenderedClaim> renderClaim(const ClaimRef& ref, const std::vector<AllocatedDevice>& results,
                                  const DeviceSnapshot& inv, const RenderOptions& opts);

// The allocation a checkpoint entry was rendered from, in the same order: rendering it again with
// the same devices gives the same spec.
std::vector<AllocatedDevice> allocationOf(const PreparedClaim& claim);

}  // namespace rdmanet::dp
