#include "deviceplugin/dra/apiserver/kube_claim_reader.h"

#include "deviceplugin/dra/apiserver/api_paths.h"

namespace rdmanet::dp {

Result<nlohmann::json> KubeClaimReader::getClaim(const std::string& ns, const std::string& name,
                                                 const Deadline& deadline) {
  RDMANET_ASSIGN_OR_RETURN(std::string path, dra::resourceClaimPath(ns, name));
  return client_.get(path, deadline);
}

}  // namespace rdmanet::dp
