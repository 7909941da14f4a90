#pragma once
// ClaimCheckpoint: the claims this node has prepared, on disk, so that after a restart (even
// kill -9) NodeUnprepareResources removes exactly what NodePrepareResources made, and a repeated
// NodePrepareResources answers what the first one did.
//
// One JSON file, {"version": 1, "claims": {"<uid>": {namespace, name, cdiSpec, devices: [...]}}},
// rewritten atomically (temp file + rename, mode 0600) on every change, so a crash leaves either
// the old or the new content. Prepare writes the CDI spec first and then the checkpoint; unprepare
// removes the spec first and then the entry. A spec whose entry was never written is still found
// by unprepare, whose file name follows from the claim UID. Not thread-safe: its owner locks.
//
// The backup: before each rewrite, the file as last loaded or written (a good one) becomes
// "<file>.backup", by a hard link renamed into place (atomic, no copy), so that a checkpoint
// corrupted on disk (a torn write on a filesystem that lies about fsync, a bit flip, a hand edit)
// can be replaced by the one before it. A corrupt file is moved aside, not deleted: renamed
// "<file>.corrupt-<UTC time>-<pid>", mode 0600, for inspection (checkpoint_recovery.h decides).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/dra/claim_reader.h"

namespace rdmanet::dp {

struct PreparedDevice {
  std::vector<std::string> request_names{};
  std::string pool_name{};    // the DRA pool: the node name
  std::string device_name{};  // the DRA device
  std::vector<std::string> cdi_device_ids{};
  bool admin_access = false;  // AllocatedDevice::admin_access; "adminAccess" when true
  // The claim's share of the device's port (the AllocatedDevice::bandwidth_mbps of its results
  // for this request, summed), which the pod record carries; "maxTxRateMbps" when set. Absent
  // from older checkpoints: none.
  std::optional<int64_t> max_tx_rate_mbps{};
  // The subrequest of a prioritized list its results were for ("alt" of "nic/alt"), which the
  // device metadata names; "subrequest" when set. Absent from older checkpoints: none.
  std::string subrequest{};
  bool operator==(const PreparedDevice&) const = default;
};

struct PreparedClaim {
  ClaimRef ref{};
  std::filesystem::path cdi_spec{};  // the file Prepare wrote
  std::vector<PreparedDevice> devices{};
  // The pods the claim was reserved for when prepared, whose device records (pod_devices.h)
  // are written again when /var/run lost them. Absent from older checkpoints: none.
  std::vector<std::string> pods{};
  // Made for one pod from its ResourceClaimTemplate (a Pod controls it): never shared, so its
  // reservations are not read again. "podOwned" when true; absent from older checkpoints.
  bool pod_owned = false;
  // Prepared with device metadata (device_metadata.h), which is then restored and removed with
  // the spec; "deviceMetadata" when true. The pod's name for a claim made from its template
  // (its resource.kubernetes.io/pod-claim-name annotation), which the metadata's path in the
  // container follows; "podClaimName" when set. Both absent from older checkpoints.
  bool device_metadata = false;
  std::optional<std::string> pod_claim_name{};
};

class ClaimCheckpoint {
 public:
  explicit ClaimCheckpoint(std::filesystem::path file) : file_(std::move(file)) {}

  // Reads the file; a missing file is an empty checkpoint. Error 6/7 when it does not parse, 5
  // when it cannot be read (the caller decides; the file is left as it is).
  Status load();
  // Reads the backup instead (memory only). False when there is none; errors as load()'s.
  Result<bool> loadBackup();
  // Writes what memory holds as the file (after loadBackup). Error 5 when it cannot.
  Status rewrite() { return save(claims_); }
  // Renames `path` (the file or the backup) to "<path>.corrupt-<UTC time>-<pid>", mode 0600, and
  // returns the new name. Error 5 when it cannot be renamed.
  Result<std::filesystem::path> moveAside(const std::filesystem::path& path);
  const PreparedClaim* find(const std::string& uid) const;
  const std::map<std::string, PreparedClaim>& claims() const { return claims_; }
  // Both write the file before returning. Error 5 when it cannot be written (memory unchanged).
  Status put(PreparedClaim claim);
  Status erase(const std::string& uid);

  const std::filesystem::path& file() const { return file_; }
  std::filesystem::path backupFile() const { return file_.string() + ".backup"; }

 private:
  Result<std::map<std::string, PreparedClaim>> parse(const std::filesystem::path& from,
                                                     bool& exists) const;
  Status save(const std::map<std::string, PreparedClaim>& claims);
  // Makes the good file on disk the backup; best effort (the checkpoint itself matters more).
  void keepBackup() const;

  std::filesystem::path file_;
  std::map<std::string, PreparedClaim> claims_;
  // Whether file_ on disk is one this process read whole or wrote: only such a file is backed up.
  bool file_is_good_ = false;
};

}  // namespace rdmanet::dp
