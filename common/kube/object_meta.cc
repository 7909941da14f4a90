#include "common/kube/object_meta.h"

#include <fmt/format.h>

#include "common/json/json_fields.h"

namespace rdmanet::kube {

using nlohmann::json;

std::string memberPath(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string elementPath(std::string_view path, size_t index) {
  return fmt::format("{}[{}]", path, index);
}

Result<ObjectMeta> decodeObjectMeta(const json& obj, std::string_view path) {
  ObjectMeta out;
  const std::string at = memberPath(path, "metadata");
  RDMANET_ASSIGN_OR_RETURN(const json* meta, optObject(obj, "metadata", at));
  if (meta == nullptr) return out;
  const auto opt = [&](const char* key, std::string& into) -> Status {
    RDMANET_ASSIGN_OR_RETURN(auto s, optString(*meta, key, memberPath(at, key)));
    into = s.value_or("");
    return okStatus();
  };
  RDMANET_RETURN_IF_ERROR(opt("name", out.name));
  RDMANET_RETURN_IF_ERROR(opt("namespace", out.ns));
  RDMANET_RETURN_IF_ERROR(opt("uid", out.uid));
  const std::string notes_at = memberPath(at, "annotations");
  RDMANET_ASSIGN_OR_RETURN(const json* notes, optObject(*meta, "annotations", notes_at));
  if (notes != nullptr) {
    for (const auto& [key, value] : notes->items()) {
      if (!value.is_string()) return jsonTypeError(memberPath(notes_at, key), "a string");
      out.annotations[key] = value.get<std::string>();
    }
  }
  const std::string refs_at = memberPath(at, "ownerReferences");
  RDMANET_ASSIGN_OR_RETURN(const json* refs, optArray(*meta, "ownerReferences", refs_at));
  if (refs == nullptr) return out;
  for (size_t i = 0; i < refs->size(); ++i) {
    const json& r = (*refs)[i];
    const std::string ri = elementPath(refs_at, i);
    if (!r.is_object()) return jsonTypeError(ri, "an object");
    OwnerReference o;
    RDMANET_ASSIGN_OR_RETURN(o.api_version,
                             reqStringAt(r, "apiVersion", memberPath(ri, "apiVersion")));
    RDMANET_ASSIGN_OR_RETURN(o.kind, reqStringAt(r, "kind", memberPath(ri, "kind")));
    RDMANET_ASSIGN_OR_RETURN(o.name, reqStringAt(r, "name", memberPath(ri, "name")));
    RDMANET_ASSIGN_OR_RETURN(o.uid, reqStringAt(r, "uid", memberPath(ri, "uid")));
    RDMANET_ASSIGN_OR_RETURN(auto c, optBool(r, "controller", memberPath(ri, "controller")));
    o.controller = c.value_or(false);
    out.owner_references.push_back(std::move(o));
  }
  return out;
}

Result<ListMeta> decodeListMeta(const json& list) {
  ListMeta out;
  RDMANET_ASSIGN_OR_RETURN(const json* meta, optObject(list, "metadata"));
  if (meta == nullptr) return out;
  RDMANET_ASSIGN_OR_RETURN(auto token, optString(*meta, "continue", "metadata.continue"));
  out.continue_token = token.value_or("");
  return out;
}

}  // namespace rdmanet::kube
