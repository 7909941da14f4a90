// libFuzzer target over a ResourceClaim as prepare reads it (deviceplugin/dra/kubelet): the API
// server's answer body, parsed as the kube client parses it, then our allocation
// (claim_allocation.h) and the pods it is reserved for (pod_devices.h). Seeds: resource.k8s.io/v1
// claims as the API server returns them (as kubectl -o json shows them). Invariants: no crash, no
// exception; every device and request we accept is a name that can go into a file or CDI name.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "deviceplugin/dra/kubelet/claim_allocation.h"
#include "deviceplugin/dra/kubelet/pod_devices.h"

using namespace rdmanet::dp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  const auto view = rdmanet::kube::decodeResourceClaim(doc);
  if (!view.ok()) {
    if (view.error().code != rdmanet::ErrorCode::kInvalidConfig) __builtin_trap();
    return 0;
  }
  const rdmanet::kube::ResourceClaim& claim = *view;
  // The UID kubelet asks for: the seeds' own, and whatever the claim says (so that the fuzzer
  // gets past the UID check without guessing it).
  std::string uid = "0b5a7c1e-3f2d-4c8b-9e61-5a4f3d2c1b0a";
  if (!claim.metadata.uid.empty()) uid = claim.metadata.uid;
  const ClaimRef ref{.ns = "ml", .uid = uid, .name = "trainer-0-rdma"};
  if (auto r = ourAllocation(claim, ref, "rdma.rdmanet.io", "node1"); r.ok()) {
    for (const auto& d : *r) {
      if (d.device.empty() || d.device.find('/') != std::string::npos) __builtin_trap();
      if (baseRequest(d.request).empty()) __builtin_trap();
    }
  }
  for (const auto& pod : reservedPods(claim)) {
    if (pod.empty() || pod.find('/') != std::string::npos) __builtin_trap();
  }
  return 0;
}
