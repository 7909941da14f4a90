#pragma once
// KubeClaimReader: ClaimReader over the Kubernetes REST client (common/kube/client.h).
// GET /apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name>; the client's time-outs
// and retries apply, cut to the caller's deadline. The client should be the reader's alone:
// cancel() cancels it.

#include "common/kube/client.h"
#include "deviceplugin/dra/claim_reader.h"

namespace rdmanet::dp {

class KubeClaimReader final : public ClaimReader {
 public:
  // A claim is a few KiB at most: a page stays far under the client's answer cap.
  static constexpr size_t kListPage = 500;

  // `client` must outlive the reader.
  explicit KubeClaimReader(kube::KubeClient& client) : client_(client) {}
  // Error 7 for a namespace or name that is not a DNS subdomain (it would not be a path
  // segment); the client's error (104, with the HTTP status) otherwise.
  Result<nlohmann::json> getClaim(const std::string& ns, const std::string& name,
                                  const Deadline& deadline) override;
  // GET /apis/resource.k8s.io/v1/resourceclaims in pages of kListPage.
  Result<std::vector<nlohmann::json>> listClaims(const Deadline& deadline) override;
  void cancel() override { client_.cancel(); }

 private:
  kube::KubeClient& client_;
};

}  // namespace rdmanet::dp
