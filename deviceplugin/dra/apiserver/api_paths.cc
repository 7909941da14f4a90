#include "deviceplugin/dra/apiserver/api_paths.h"

#include <fmt/format.h>

#include "common/kube/names.h"

namespace rdmanet::dra {

Result<std::string> resourceClaimPath(const std::string& ns, const std::string& name) {
  if (!kube::isDnsLabel(ns)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("claim namespace \"{}\" is not a DNS label", ns));
  }
  if (!kube::isDnsSubdomain(name)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("claim name \"{}\" is not a DNS subdomain", name));
  }
  return fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}", ns, name);
}

std::string allResourceClaimsPath() { return "/apis/resource.k8s.io/v1/resourceclaims"; }

Result<std::string> nodePath(const std::string& name) {
  if (!kube::isDnsSubdomain(name)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("node name \"{}\" is not a DNS subdomain", name));
  }
  return "/api/v1/nodes/" + name;
}

Result<std::string> eventsPath(const std::string& ns) {
  if (!kube::isDnsLabel(ns)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("event namespace \"{}\" is not a DNS label", ns));
  }
  return fmt::format("/api/v1/namespaces/{}/events", ns);
}

}  // namespace rdmanet::dra
