#include "deviceplugin/dra/kube_claim_reader.h"

#include <fmt/format.h>

#include "common/kube/names.h"

namespace rdmanet::dp {

Result<nlohmann::json> KubeClaimReader::getClaim(const std::string& ns, const std::string& name) {
  if (!kube::isDnsLabel(ns) || !kube::isDnsSubdomain(name)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("claim {}/{}: not a valid namespace and name", ns, name));
  }
  return client_.get(
      fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}", ns, name));
}

}  // namespace rdmanet::dp
