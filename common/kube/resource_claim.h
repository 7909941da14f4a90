#pragma once
// A resource.k8s.io/v1 ResourceClaim as rdmanet reads it: the typed, non-throwing view that both
// DRA sides (the kubelet side preparing it, the API-server side writing its device statuses)
// decode a claim into, once, instead of walking the JSON by hand.
//
// Only what rdmanet reads is decoded. Every field has its API type, checked: a wrong type, or a
// key the API requires that is missing, is error 7 naming the key's path in the claim
// ("status.allocation.devices.results[0].pool" must be a string). Absent optional parts (no
// status, no allocation yet) are empty, not errors. What a field's value means (is this result
// ours? is that UID well-formed?) stays with the readers.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/kube/object_meta.h"

namespace rdmanet::kube {

// spec.devices.requests[i]
struct DeviceRequest {
  std::string name{};
};

// status.allocation.devices.results[i]: which device of which driver's pool serves a request.
struct DeviceAllocationResult {
  std::string request{};  // "nic", or "nic/alt" for a subrequest
  std::string driver{};
  std::string pool{};
  std::string device{};
  std::optional<std::string> share_id{};  // shareID: one of several shares of the device
  bool admin_access = false;              // adminAccess (absent: false)
  // consumedCapacity: what the scheduler took of a device that many claims share
  // (allowMultipleAllocations), each capacity's quantity as its whole value (parseQuantity:
  // "50G" -> 50'000'000'000). Absent: empty.
  std::map<std::string, int64_t> consumed_capacity{};
};

// status.reservedFor[i]: a consumer of the claim (a pod: resource "pods", apiGroup "").
struct ConsumerReference {
  std::string api_group{};  // absent: "" (the core group)
  std::string resource{};
  std::string name{};
  std::string uid{};
};

// status.devices[i]: a driver's report on one allocated device. `raw` is the entry itself, to be
// carried over unchanged when another driver wrote it; it points into the decoded document.
struct AllocatedDeviceStatus {
  std::string driver{};
  std::string pool{};
  std::string device{};
  std::optional<std::string> share_id{};
  const nlohmann::json* raw = nullptr;
};

struct ResourceClaim {
  ObjectMeta metadata{};
  std::vector<DeviceRequest> requests{};  // spec.devices.requests
  // status.allocation.devices.results is there (the claim is allocated), maybe empty.
  bool allocated = false;
  std::vector<DeviceAllocationResult> results{};
  std::vector<ConsumerReference> reserved_for{};
  std::vector<AllocatedDeviceStatus> devices{};  // status.devices
};

// Decodes `claim`; error 7 naming the path of the first wrong field. The view's `raw` pointers
// point into `claim`, which must outlive it.
Result<ResourceClaim> decodeResourceClaim(const nlohmann::json& claim);

}  // namespace rdmanet::kube
