#pragma once
// API paths of the objects the DRA driver reads, built only from validated names so that
// nothing a pod or kubelet sends can steer a request elsewhere ("../", "?", "%2F").

#include <string>

#include "common/base/result.h"

namespace rdmanet::dra {

// "/apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name>". Error 7 unless the
// namespace is a DNS label and the name a DNS subdomain (what kubelet's Claim carries).
Result<std::string> resourceClaimPath(const std::string& ns, const std::string& name);
// "/apis/resource.k8s.io/v1/resourceclaims": every namespace's claims (a list).
std::string allResourceClaimsPath();
// "/api/v1/nodes/<name>". Error 7 unless the name is a DNS subdomain.
Result<std::string> nodePath(const std::string& name);
// "/api/v1/namespaces/<ns>/events" (core v1 Events, which `kubectl get events` lists). Error 7
// unless the namespace is a DNS label.
Result<std::string> eventsPath(const std::string& ns);

}  // namespace rdmanet::dra
