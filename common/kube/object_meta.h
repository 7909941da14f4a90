#pragma once
// The metadata every Kubernetes object has (metav1.ObjectMeta), as far as rdmanet reads it, and
// its decoding, shared by the object views (resource_claim.h, resource_slice.h).

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::kube {

// metadata.ownerReferences[i]
struct OwnerReference {
  std::string api_version{};
  std::string kind{};
  std::string name{};
  std::string uid{};
  bool controller = false;  // absent: false
};

struct ObjectMeta {
  std::string name{};  // absent: "" (so are the other strings)
  std::string ns{};    // namespace
  std::string uid{};
  std::map<std::string, std::string> annotations{};
  std::vector<OwnerReference> owner_references{};
};

// Decodes the member "metadata" of `obj` (absent: all empty); `path` names `obj` in errors ("",
// or "items[3]"). Error 7 naming the key ("metadata.ownerReferences[0].uid") for a wrong type or
// a missing owner reference field.
Result<ObjectMeta> decodeObjectMeta(const nlohmann::json& obj, std::string_view path);

// A list answer's metadata (metav1.ListMeta): the token of the next page ("" on the last).
struct ListMeta {
  std::string continue_token{};
};
// Error 7 naming "metadata.continue" (or "metadata") when it has the wrong type.
Result<ListMeta> decodeListMeta(const nlohmann::json& list);

// "<path>.<key>", or "<key>" for the document itself (path "").
std::string memberPath(std::string_view path, std::string_view key);

// The index'th element of array `path`: "<path>[<index>]".
std::string elementPath(std::string_view path, size_t index);

}  // namespace rdmanet::kube
