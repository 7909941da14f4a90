#pragma once
// ClaimNetworkSync: keeps the status.devices entries of the claims this node prepared in line
// with the CNI's network reports (common/dra/net_report.h), through a ClaimStatusWriter.
//
// Why polling: the reports are files the CNI writes under the pod device records' directory
// (kubelet/pod_devices.h), a handful per pod, and a claim's status is for people and
// controllers, not on any pod's start-up path. A pass every second on the injected clock reads
// them (kubelet/net_reports.h) and writes a claim only when what its reports say changed since
// the last successful write, so a quiet node costs a directory scan and no API request.
//   - ADD writes a report, DEL withdraws a successful one: the next pass writes the entry, or
//     removes it.
//   - Unprepare removes the claim's reports with its record, and the claim leaves the
//     checkpoint: the next pass removes our entries (a claim already deleted is success).
//   - At start nothing is known as written: the first pass writes every prepared claim once,
//     which drops the entries of reports withdrawn while the daemon was down.
//   - A write that fails is tried again on the next pass.
// Only our driver's entries, of this node's pool, for devices we prepared: the writer leaves
// every other entry as it is.
//
// Not thread-safe: one worker runs passes (DraFront's).

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/base/deadline.h"
#include "deviceplugin/dra/claim_status_writer.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"

namespace rdmanet::dp {

class ClaimNetworkSync {
 public:
  using PreparedClaims = std::function<std::vector<PreparedClaim>()>;
  // `pod_devices_dir` holds the records and the reports; `pool` is this node's pool name.
  // `writer` must outlive the sync.
  ClaimNetworkSync(std::filesystem::path pod_devices_dir, std::string pool, PreparedClaims prepared,
                   ClaimStatusWriter& writer)
      : dir_(std::move(pod_devices_dir)),
        pool_(std::move(pool)),
        prepared_(std::move(prepared)),
        writer_(writer) {}

  // One pass, each write bounded by `deadline`. Failures are logged (once per distinct
  // refusal of a report) and retried on the next pass. Returns how many claims were written.
  size_t runOnce(const Deadline& deadline);

 private:
  struct Written {
    ClaimRef ref;
    OwnedDevices owned;
    std::string reports;  // what the reports said, as JSON text
  };
  const std::filesystem::path dir_;
  const std::string pool_;
  const PreparedClaims prepared_;
  ClaimStatusWriter& writer_;
  std::map<std::string, Written> written_;  // by claim UID
  std::set<std::string> refusals_logged_;
};

}  // namespace rdmanet::dp
