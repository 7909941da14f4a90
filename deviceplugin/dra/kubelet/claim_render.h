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
// Each returned device names both CDI devices (cdi_spec.h says why). With device metadata
// (device_metadata.h), each request also gets its metadata file and the CDI device that mounts
// it, whose ID the request's first device names as well.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"
#include "deviceplugin/dra/kubelet/device_metadata.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

struct RenderOptions {
  std::string driver{};  // for messages
  std::string node{};    // the DRA pool name
  std::filesystem::path cdi_dir{};
  // Device metadata: where the files go (<plugin dir>/dra-device-metadata); none when empty.
  std::filesystem::path metadata_dir{};
  std::optional<std::string> pod_claim_name{};  // the metadata's MetadataClaim::pod_claim_name
};

struct RenderedClaim {
  PreparedClaim prepared{};
  std::vector<CdiDevice> cdi{};  // the spec's devices, for writeClaimCdiSpec(prepared.cdi_spec)
  std::vector<RequestMetadata> metadata{};  // per request, for writeClaimMetadata
};

// Error 100 for a device that is not in `inv`; request_env's and buildAllocation's errors (11 for
// an unhealthy device) and renderRequestMetadata's (7 for a name unfit for a path) as they come.
Result<RenderedClaim> renderClaim(const ClaimRef& ref, const std::vector<AllocatedDevice>& results,
                                  const DeviceSnapshot& inv, const RenderOptions& opts);

// The allocation a checkpoint entry was rendered from, in the same order: rendering it again with
// the same devices gives the same spec.
std::vector<AllocatedDevice> allocationOf(const PreparedClaim& claim);

}  // namespace rdmanet::dp
