#pragma once
// The CNI's network reports of a prepared claim's devices (common/dra/net_report.h), as the
// daemon takes them: the CNI acts on a pod's input, so a report counts only when
//   - it lies in a pod dir that holds our record of the claim (pod_devices.h), under the
//     report name of one of the claim's devices we prepared (not one with admin access: the
//     CNI never attaches those),
//   - it is a regular file (not a symlink) of at most kMaxReportBytes, and
//   - parseNetReport() accepts its content.
// One report per device: a shared claim's pods are read in pod-UID order and the first one
// counts (a VF is in one pod at a time).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/dra/net_report.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"

namespace rdmanet::dp {

struct ClaimNetReports {
  std::map<std::string, dra::NetReport> by_device{};
  // "<path>: <why>" for each report refused, for the caller to log.
  std::vector<std::string> refused{};
};

ClaimNetReports readClaimNetReports(const std::filesystem::path& dir, const PreparedClaim& claim);

}  // namespace rdmanet::dp
