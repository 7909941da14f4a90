#pragma once
// ClaimReader: how the DRA front reads a ResourceClaim from the API server. Production reads it
// through the Kubernetes REST client (kube_claim_reader.h); tests point that same client at the
// stand-in API server.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/deadline.h"
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
  // The ResourceClaim object (resource.k8s.io/v1) as the API server returns it, by `deadline`
  // (kubelet's) at the latest. Thread-safe and concurrent: kubelet prepares claims in parallel,
  // and a slow read never holds up another. Errors carry the cause (not found, unreachable, the
  // deadline passed).
  virtual Result<nlohmann::json> getClaim(const std::string& ns, const std::string& name,
                                          const Deadline& deadline) = 0;
  // Every ResourceClaim of the cluster (all namespaces), for rebuilding a lost checkpoint: the
  // API has no selector on an allocation's node, so the caller keeps those of its node. Read in
  // pages, so that no one answer grows with the cluster. Errors as getClaim's.
  virtual Result<std::vector<nlohmann::json>> listClaims(const Deadline& deadline) = 0;
  // Ends the reads in flight (within about a second) and fails later ones: for shutdown, so that
  // the gRPC server's stop does not wait for a stalled API server.
  virtual void cancel() = 0;
};

}  // namespace rdmanet::dp
