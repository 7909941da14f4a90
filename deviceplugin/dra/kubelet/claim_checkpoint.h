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

#include <filesystem>
#include <map>
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
  bool operator==(const PreparedDevice&) const = default;
};

struct PreparedClaim {
  ClaimRef ref{};
  std::filesystem::path cdi_spec{};  // the file Prepare wrote
  std::vector<PreparedDevice> devices{};
  // The pods the claim was reserved for when prepared, whose device records (pod_devices.h)
  // are written again when /var/run lost them. Absent from older checkpoints: none.
  std::vector<std::string> pods{};
};

class ClaimCheckpoint {
 public:
  explicit ClaimCheckpoint(std::filesystem::path file) : file_(std::move(file)) {}

  // Reads the file; a missing file is an empty checkpoint. Error 6/7 when it does not parse
  // (the caller decides; the file is left as it is for inspection).
  Status load();
  const PreparedClaim* find(const std::string& uid) const;
  const std::map<std::string, PreparedClaim>& claims() const { return claims_; }
  // Both write the file before returning. Error 5 when it cannot be written (memory unchanged).
  Status put(PreparedClaim claim);
  Status erase(const std::string& uid);

  const std::filesystem::path& file() const { return file_; }

 private:
  Status save(const std::map<std::string, PreparedClaim>& claims) const;

  std::filesystem::path file_;
  std::map<std::string, PreparedClaim> claims_;
};

}  // namespace rdmanet::dp
