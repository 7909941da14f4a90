#pragma once
// ClaimPreparer: NodePrepareResources / NodeUnprepareResources for one claim at a time, in plain
// C++ (the gRPC layer only translates).
//
// prepare(ref):
//   1. a claim already in the checkpoint is answered from it (idempotent, no API call);
//   2. GET the ResourceClaim (ClaimReader), check its UID, take the allocation results of this
//      driver on this node's pool (claim_allocation.h);
//   3. map each result's device to a pool device of the current DeviceSnapshot, and its request
//      to the top-level request (baseRequest: containers and kubelet know no subrequests);
//   4. build the container's share with the device plugin's code (buildAllocation): per device,
//      its char devices plus rdma_cm (and pod-info mount); per request, the env (PCIDEVICE_*,
//      NCCL hints) over all of the request's devices (request_env.h), since they go to the same
//      containers. Each returned device names both CDI devices (cdi_spec.h says why);
//   5. write the claim's CDI spec, then checkpoint the claim.
// Within kubelet's deadline: the GET is bounded by it, and nothing is committed (spec or
// checkpoint) once it has passed, since kubelet then gives up on the call and may already have
// unprepared the claim; what a late prepare committed would stay behind for good.
// unprepare(ref): removes the CDI spec (the checkpointed path, or the one the UID names when the
// checkpoint never got the claim) and then the checkpoint entry. An unknown claim is success.
//
// Thread-safe: gRPC threads call it concurrently. Claims are serialised around the checkpoint,
// not around the API GET, so a slow API server does not stall other claims' answers from the
// checkpoint.

#include <filesystem>
#include <mutex>
#include <string>

#include "common/base/result.h"
#include "deviceplugin/dra/claim_checkpoint.h"
#include "deviceplugin/dra/claim_reader.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

struct PreparerOptions {
  std::string driver{};  // "rdma.rdmanet.io"
  std::string node{};    // this node: the DRA pool name
  std::filesystem::path cdi_dir = "/var/run/cdi";
  std::filesystem::path checkpoint{};  // the checkpoint file
};

class ClaimPreparer {
 public:
  // `reader` and `state` must outlive the preparer.
  ClaimPreparer(PreparerOptions opts, ClaimReader& reader, const DeviceState& state);

  // Loads the checkpoint. An unreadable one is an error (5/6/7): starting without it would
  // forget what earlier runs prepared.
  Status start();
  // Per-claim errors: 7 for a bad reference, a UID mismatch, a claim not for us; 100 for a device
  // that is not ours; 11 for an unhealthy device or `deadline` passed (nothing left behind); the
  // reader's and file errors as they come.
  Result<PreparedClaim> prepare(const ClaimRef& ref, const Deadline& deadline = {});
  Status unprepare(const ClaimRef& ref);

  size_t preparedCount() const;

 private:
  Result<PreparedClaim> build(const ClaimRef& ref, const nlohmann::json& claim) const;

  const PreparerOptions opts_;
  ClaimReader& reader_;
  const DeviceState& state_;
  mutable std::mutex mu_;
  ClaimCheckpoint checkpoint_;
};

}  // namespace rdmanet::dp
