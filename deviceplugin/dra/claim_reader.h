#pragma once
// ClaimReader: how the DRA front reads a ResourceClaim from the API server. Production reads it
// through the Kubernetes REST client (kube_claim_reader.h); tests point that same client at the
// stand-in API server.

#include <nlohmann/json.hpp>
#include <string>

#include "common/base/result.h"

namespace rdmanet::dp {

// What kubelet names a claim by in NodePrepareResources / NodeUnprepareResources.
struct ClaimRef {
  std::string ns{};
  std::string uid{};
  std::string name{};
};

class ClaimReader {
 public:
  virtual ~ClaimReader() = default;
  // The ResourceClaim object (resource.k8s.io/v1) as the API server returns it. Thread-safe
  // (kubelet may prepare claims in parallel). Errors carry the cause (not found, unreachable).
  virtual Result<nlohmann::json> getClaim(const std::string& ns, const std::string& name) = 0;
};

}  // namespace rdmanet::dp
