#pragma once
// The CDI spec of one prepared claim: kind "rdmanet.io/rdma", one CDI device per prepared DRA
// device, named "<claim-uid>-<device>" (CDI device names must be unique across every spec of a
// kind, and one device may be prepared for several claims when it is shareable). Each device's
// containerEdits are what the device plugin's Allocate gives a container for it
// (pools/allocate.h): its uverbs/umad/issm nodes plus rdma_cm, PCIDEVICE_* and NCCL hints.
// One file per claim, written atomically with mode 0600.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {

inline constexpr std::string_view kCdiKind = "rdmanet.io/rdma";

struct CdiDevice {
  std::string name{};  // "<claim-uid>-<device>"
  ContainerAllocation edits{};
};

// "rdmanet.io-rdma_<uid>.json" (the CDI convention "<vendor>-<class>_<id>").
std::string claimSpecFileName(const std::string& claim_uid);
// "rdmanet.io/rdma=<name>".
std::string cdiDeviceId(const std::string& name);

nlohmann::json claimCdiSpec(const std::vector<CdiDevice>& devices);
Status writeClaimCdiSpec(const std::filesystem::path& file, const std::vector<CdiDevice>& devices);
// A missing file is success (unprepare is idempotent). Error 5 when it cannot be removed.
Status removeClaimCdiSpec(const std::filesystem::path& file);

}  // namespace rdmanet::dp
