#pragma once
// ClaimPreparer: NodePrepareResources / NodeUnprepareResources for one claim at a time, in plain
// C++ (the gRPC layer only translates).
//
// prepare(ref):
//   1. a claim already in the checkpoint is answered from it (idempotent, no API call), its CDI
//      spec written again first if it is gone;
//   2. GET the ResourceClaim (ClaimReader), check its UID, take the allocation results of this
//      driver on this node's pool (claim_allocation.h);
//   3. render it (claim_render.h): map each result's device to a device of the current
//      DeviceSnapshot and build the CDI spec, without I/O;
//   4. commit: write the claim's CDI spec, its device metadata (metadata_files.h), then checkpoint
//      the claim.
// Within kubelet's deadline: the GET is bounded by it, and nothing is committed (spec or
// checkpoint) once it has passed, since kubelet then gives up on the call and may already have
// unprepared the claim; what a late prepare committed would stay behind for good.
// unprepare(ref): removes the CDI spec (the checkpointed path, or the one the UID names when the
// checkpoint never got the claim), the device metadata (found by the UID too) and then the
// checkpoint entry. An unknown claim is success. A
// prepare of the same claim still in flight is cancelled: it commits nothing. A prepare that
// starts after the unprepare is not.
//
// Converging after a restart or reboot: start() removes rdmanet's CDI specs and device metadata
// that no checkpoint entry owns and the temp files of writes a crash cut short; restoreSpecs(),
// once the devices are known, writes again every checkpointed claim's spec (and metadata) that is
// gone (/var/run/cdi is a tmpfs on most
// nodes, the checkpoint is not).
//
// A claim shared by several pods (status.reservedFor) is prepared once per node: kubelet does not
// call prepare again for a pod that uses a claim it already prepared. So the pods added since
// the prepare get their device records from refreshReservations(), which the DRA front runs
// every few seconds (a new pod's CNI ADD that comes first fails, and kubelet retries it), and
// from a later prepare of the claim (kubelet's restart), which reads the reservations again
// within kubelet's deadline. Claims a Pod owns (made from its ResourceClaimTemplate) are never
// shared and never read again. Results with adminAccess (monitoring
// access to a device another claim may hold) get their CDI device but no pod record and no
// pod-info mount: the CNI must never attach them.
//
// A corrupt checkpoint (checkpoint_recovery.h) is replaced by its backup, or rebuilt from the API
// server by rebuildFromApi(); start() skips its sweeps until then (it cannot tell what is owned).
//
// Thread-safe: gRPC threads call it concurrently. Claims are serialised around the checkpoint,
// not around the API GET, so a slow API server does not stall other claims' answers from the
// checkpoint.

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "deviceplugin/dra/claim_reader.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"
#include "deviceplugin/dra/kubelet/claim_render.h"
#include "deviceplugin/dra/kubelet/metadata_files.h"
#include "deviceplugin/dra/kubelet/pod_devices.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

struct PreparerOptions {
  std::string driver{};  // "rdma.rdmanet.io"
  std::string node{};    // this node: the DRA pool name
  std::filesystem::path cdi_dir = "/var/run/cdi";
  std::filesystem::path checkpoint{};  // the checkpoint file
  // Where the pod → device records go (pod_devices.h); none when empty.
  std::filesystem::path pod_devices_dir{};
  // Device metadata for the container (KEP-5304, device_metadata.h): where its files go
  // (<plugin dir>/dra-device-metadata; none at all when empty), and whether new prepares write
  // them. A claim prepared with them keeps them (restored, then removed by its unprepare) however
  // `device_metadata` is set later; the start-up sweep looks in `metadata_dir` either way.
  std::filesystem::path metadata_dir{};
  bool device_metadata = false;
  // Required, and must outlive the preparer: kubelet's deadline is measured on it.
  const Clock* clock = nullptr;
};

class ClaimPreparer {
 public:
  // `reader` and `state` must outlive the preparer.
  ClaimPreparer(PreparerOptions opts, ClaimReader& reader, const DeviceState& state);

  // Loads the checkpoint (recovering a corrupt one: checkpoint_recovery.h) and removes the
  // orphaned specs and temp files. Error 5 only when a corrupt checkpoint cannot be moved aside.
  Status start();
  // Whether start() left the checkpoint to be rebuilt from the API server.
  bool rebuildPending() const;
  // Rebuilds a checkpoint start() could not recover: every claim allocated to this driver on this
  // node and reserved for a pod (kubelet prepared it, or will) is prepared again as prepare()
  // would, except those prepared or unprepared since start(); then the sweeps start() skipped.
  // Call once the devices are known. The list's error leaves it pending (call again).
  Status rebuildFromApi(const Deadline& deadline = {});
  // Reads every shareable prepared claim's reservations again (one GET each) and writes the
  // device records of the pods reserved since it was prepared. Failures are logged per claim.
  void refreshReservations();
  // What start() and rebuildFromApi() did about a corrupt checkpoint, one line ("" when it was
  // read as it was): for /readyz. Any thread.
  std::string recoveryNote() const;
  // Writes again the missing CDI specs of checkpointed claims, from the current DeviceState
  // (call once it holds the node's devices). Failures are logged; the claim stays checkpointed
  // and a later prepare of it tries again.
  void restoreSpecs();
  // Per-claim errors: 7 for a bad reference, a UID mismatch, a claim not for us; 100 for a device
  // that is not ours; 11 for an unhealthy device or `deadline` passed (nothing left behind); the
  // reader's and file errors as they come. `pod`, when given, is set to the one pod the claim
  // names (onePodOf) once the claim was read: whom a failure concerns (prepare_report.h).
  Result<PreparedClaim> prepare(const ClaimRef& ref, const Deadline& deadline = {},
                                std::optional<ClaimPod>* pod = nullptr);
  Status unprepare(const ClaimRef& ref);

  size_t preparedCount() const;
  // A copy of every prepared claim, by UID (for the network status sync). Any thread.
  std::vector<PreparedClaim> preparedClaims() const;

 private:
  // For a new prepare (`pod_claim_name` from the claim) or a checkpoint entry's.
  RenderOptions renderOptions(const std::optional<std::string>& pod_claim_name) const;
  RenderOptions renderOptions(const PreparedClaim& c) const;
  MetadataPlace metadataPlace() const;
  // Whether the claim's spec and its metadata, when it has any, are all on disk.
  bool onDisk(const PreparedClaim& c) const;
  // Both with mu_ held.
  Status restoreSpec(const PreparedClaim& c);
  Result<PreparedClaim> answerFromCheckpoint(const PreparedClaim& c);
  // Writes the spec, the pods' records, then the checkpoint entry; nothing left on failure.
  // Past `deadline` after the spec is written: nothing left, error 11.
  Status commit(RenderedClaim& r, const std::set<std::string>& pods, const Deadline& deadline);
  // The specs, pod records and temp files no checkpoint entry owns.
  void sweepUnowned();
  // Without mu_: records the pods `claim` is now reserved for that the entry lacks.
  void addReservedPods(const ClaimRef& ref, const Deadline& deadline);

  struct InFlight {
    int prepares = 0;  // prepares of the claim between their start and their end
    // Unprepares of the claim while any was in flight. A prepare notes the count when it starts
    // and commits only if it is unchanged: an unprepare cancels the prepares it raced, not one
    // kubelet sent after it (the pod's next try while the first call still reads the claim).
    uint64_t unprepares = 0;
  };

  const PreparerOptions opts_;
  ClaimReader& reader_;
  const DeviceState& state_;
  mutable std::mutex mu_;
  ClaimCheckpoint checkpoint_;
  std::map<std::string, InFlight> in_flight_;  // by claim UID
  bool rebuild_pending_ = false;
  std::set<std::string> unprepared_before_rebuild_;  // claim UIDs, while rebuild_pending_
  std::string recovery_note_;
};

}  // namespace rdmanet::dp
