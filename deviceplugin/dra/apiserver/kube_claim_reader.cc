#include "deviceplugin/dra/apiserver/kube_claim_reader.h"

#include "deviceplugin/dra/apiserver/api_paths.h"

namespace rdmanet::dp {

Result<nlohmann::json> KubeClaimReader::getClaim(const std::string& ns, const std::string& name,
                                                 const Deadline& deadline) {
  RDMANET_ASSIGN_OR_RETURN(std::string path, dra::resourceClaimPath(ns, name));
  return client_.get(path, deadline);
}

Result<std::vector<nlohmann::json>> KubeClaimReader::listClaims(const Deadline& deadline) {
  std::vector<nlohmann::json> out;
  kube::ListOptions page{.limit = kListPage};
  for (;;) {
    RDMANET_ASSIGN_OR_RETURN(nlohmann::json list,
                             client_.list(dra::allResourceClaimsPath(), page, deadline));
    if (auto it = list.find("items"); it != list.end() && it->is_array()) {
      for (auto& item : *it) out.push_back(std::move(item));
    }
    const nlohmann::json& meta = list.contains("metadata") ? list["metadata"] : nlohmann::json();
    page.continue_token = meta.is_object() ? meta.value("continue", "") : "";
    if (page.continue_token.empty()) return out;
  }
}

}  // namespace rdmanet::dp
