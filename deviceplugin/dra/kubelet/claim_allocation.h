#pragma once
// Which devices of a ResourceClaim are ours to prepare: status.allocation.devices.results[]
// entries whose `driver` is this driver and whose `pool` is this node's (rdmanet publishes one
// pool per node, named after the node). Over the claim's typed view (common/kube/resource_claim.h),
// no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/kube/resource_claim.h"
#include "deviceplugin/dra/claim_reader.h"

namespace rdmanet::dp {

struct AllocatedDevice {
  std::string request{};  // the result's `request` ("nic", or "nic/alt" for a subrequest)
  std::string device{};   // the DRA device name in our pool
  // The result's adminAccess: monitoring access to a device that another claim may hold; its
  // pod gets the device's CDI edits, never the device as a network (no pod record, no pod info).
  bool admin_access = false;
  // What the result consumed of the device's rdmanet.io/bandwidth (a shared PF, KEP-5075), in
  // Mbit/s rounded up, at least 1: the pod's share of the port. None when it consumed none.
  std::optional<int64_t> bandwidth_mbps{};
};

// Errors (7) when the claim's UID is not ref.uid, the claim is not allocated, or no result names
// this driver on this node. A result with a malformed device or request name (a DNS label, or
// "<label>/<label>" for a subrequest) is an error too: it could only
// come from a broken or hostile writer. A consumed bandwidth below zero is one too.
Result<std::vector<AllocatedDevice>> ourAllocation(const kube::ResourceClaim& claim,
                                                   const ClaimRef& ref, const std::string& driver,
                                                   const std::string& node);

// The top-level request a result's `request` belongs to: "nic" for "nic" and for "nic/alt" (a
// subrequest of a prioritized list). Containers name top-level requests only, and kubelet matches
// them against the `request_names` a driver returns with exact string equality, so that is what
// prepare returns and groups by (the upstream kubeletplugin helper strips subrequests likewise).
std::string_view baseRequest(std::string_view request);

// The claim UIDs we accept from kubelet ([A-Za-z0-9-], 1-63 bytes): they go into file names.
bool isValidClaimUid(std::string_view uid);

}  // namespace rdmanet::dp
