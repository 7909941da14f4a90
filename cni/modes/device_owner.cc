#include "cni/modes/device_owner.h"

#include <fmt/format.h>

#include <algorithm>

#include "cni/modes/claimed_device.h"
#include "cni/pod/kubelet_checkpoint.h"

namespace rdmanet::cni {

Status checkPodOwnsDevice(const PciAddress& device, std::string_view key, const CniArgs& args,
                          const OwnerRecords& records) {
  const std::string pod = args.pod_name.empty()
                              ? std::string("(no K8S_POD_NAME)")
                              : fmt::format("{}/{}", args.pod_namespace, args.pod_name);
  if (args.pod_uid.empty()) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("{} {} names a device the pod chose, and pod {} has no "
                                 "K8S_POD_UID to prove it owns it; nothing was attached",
                                 key, device.str(), pod),
                     "request the device through the network's resource or DRA claim");
  }
  std::string why;
  RDMANET_ASSIGN_OR_RETURN(
      bool allocated, kubeletAllocated(records.kubelet_checkpoint, args.pod_uid, device, &why));
  if (allocated) return okStatus();
  std::string looked = why;
  if (!records.dra_devices.dir.empty()) {
    RDMANET_ASSIGN_OR_RETURN(auto claimed, podClaimedDevices(records.dra_devices, args.pod_uid));
    if (std::find(claimed.begin(), claimed.end(), device) != claimed.end()) return okStatus();
    looked += fmt::format("; the pod's DRA records in {} name {} device(s), not this one",
                          records.dra_devices.dir, claimed.size());
  }
  return makeError(
      ErrorCode::kInvalidConfig,
      fmt::format("{} {} is not allocated to pod {} (uid {}); nothing was attached", key,
                  device.str(), pod, args.pod_uid),
      fmt::format("a pod may name only a device kubelet or a DRA claim gave it ({})", looked));
}

}  // namespace rdmanet::cni
