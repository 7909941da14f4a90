#include "deviceplugin/dra/apiserver/kube_claim_reader.h"

#include "common/json/json_fields.h"
#include "common/kube/object_meta.h"
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
    // The claims themselves are decoded by their readers (kube::decodeResourceClaim), one by
    // one: a claim rdmanet cannot read must not hide the others.
    RDMANET_ASSIGN_OR_RETURN(const nlohmann::json* items, optArray(list, "items", "items"));
    if (items != nullptr) {
      for (const auto& item : *items) out.push_back(item);
    }
    RDMANET_ASSIGN_OR_RETURN(kube::ListMeta meta, kube::decodeListMeta(list));
    page.continue_token = std::move(meta.continue_token);
    if (page.continue_token.empty()) return out;
  }
}

}  // namespace rdmanet::dp
