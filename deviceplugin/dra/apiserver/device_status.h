#pragma once
// The entries of a ResourceClaim's status.devices that carry a network report, in the wire
// format of resource.k8s.io/v1 AllocatedDeviceStatus:
//   {"driver", "pool", "device", ["shareID"],
//    "conditions": [{"type": "Ready", "status": "True"|"False", "reason", "message",
//                    "lastTransitionTime"}],
//    "networkData": {"interfaceName", "ips": [...], "hardwareAddress"}}
// A successful ADD gives Ready=True (reason InterfaceReady) and the networkData; a failed one
// Ready=False with a reason named for the CNI error (DeviceNotFound, NetlinkFailure, ...) and
// its message, and no networkData. Pure functions: no I/O, the time is the caller's.

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/dra/net_report.h"
#include "common/kube/resource_claim.h"
#include "deviceplugin/dra/claim_status_writer.h"

namespace rdmanet::dra {

// The condition reason for a CNI error code (Kubernetes' reason format: CamelCase).
std::string failureReason(int cni_code);

// One entry. `share_id` is the allocation result's shareID ("" for none); `previous`, when not
// null, is the entry as the claim holds it: its Ready condition's lastTransitionTime is kept
// when the status did not change. `now` is an RFC 3339 time.
nlohmann::json deviceStatusEntry(const std::string& driver, const std::string& pool,
                                 const std::string& device, const std::string& share_id,
                                 const NetReport& report, const nlohmann::json* previous,
                                 const std::string& now);

// The claim's status.devices (`claim` as read and decoded) with the entries of `driver` in `owned`
// brought in line with `reports`: one per allocation result of ours (device, shareID) whose device
// has a report, replacing the old entry in place or appended; our entries without a report are
// dropped. Entries of other drivers or pools stay as they were, fields we do not read included.
nlohmann::json mergeDeviceStatuses(const kube::ResourceClaim& claim, const std::string& driver,
                                   const dp::OwnedDevices& owned,
                                   const std::map<std::string, NetReport>& reports,
                                   const std::string& now);

}  // namespace rdmanet::dra
