#pragma once
// ClaimStatusWriter: how the DRA front writes what the CNI made of a claim's devices into the
// claim's status.devices (resource.k8s.io/v1 AllocatedDeviceStatus: networkData and a Ready
// condition). Production writes through the Kubernetes REST client
// (apiserver/kube_claim_status_writer.h); tests point that same client at the stand-in API
// server. The reports come from the CNI (common/dra/net_report.h) by way of
// claim_network_sync.h.

#include <map>
#include <set>
#include <string>

#include "common/base/deadline.h"
#include "common/base/result.h"
#include "common/dra/net_report.h"
#include "deviceplugin/dra/claim_reader.h"

namespace rdmanet::dp {

// Which entries of a claim's status.devices are ours to write: our driver's (the writer's),
// of this node's pool, for the claim's devices we prepared.
struct OwnedDevices {
  std::string pool{};
  std::set<std::string> devices{};
};

class ClaimStatusWriter {
 public:
  virtual ~ClaimStatusWriter() = default;
  // Brings the claim's entries of `owned` in line with `reports` (by device): an entry with
  // networkData and a Ready condition for each device with a report, none for a device without
  // one. Every other entry (other drivers', other pools') stays exactly as it is. Nothing is
  // written when nothing changes. A claim that is gone, or has another UID now, is success:
  // there is nothing of ours left to bring in line. Error 104 (with the HTTP status) when the
  // API server refuses or does not answer, also after a few conflicts in a row.
  virtual Status writeNetworkStatus(const ClaimRef& ref, const OwnedDevices& owned,
                                    const std::map<std::string, dra::NetReport>& reports,
                                    const Deadline& deadline) = 0;
  // Ends the writes in flight and fails later ones (shutdown).
  virtual void cancel() = 0;
};

}  // namespace rdmanet::dp
