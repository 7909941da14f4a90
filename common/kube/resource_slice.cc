#include "common/kube/resource_slice.h"

#include <fmt/format.h>

#include "common/json/json_fields.h"

namespace rdmanet::kube {

using nlohmann::json;

namespace {

const json& emptyArray() {
  static const json kEmpty = json::array();
  return kEmpty;
}

// spec.<key>: an optional array of objects that each need a string `name` (devices, counter
// sets). `array` points at it (absent: an empty array), `names` gets the names in order.
Status namedList(const json& spec, const char* key, const std::string& spec_at, const json*& array,
                 std::vector<std::string>& names) {
  const std::string list_at = memberPath(spec_at, key);
  RDMANET_ASSIGN_OR_RETURN(array, optArray(spec, key, list_at));
  if (array == nullptr) array = &emptyArray();
  for (size_t i = 0; i < array->size(); ++i) {
    const json& item = (*array)[i];
    const std::string at = elementPath(list_at, i);
    if (!item.is_object()) return jsonTypeError(at, "an object");
    RDMANET_ASSIGN_OR_RETURN(std::string name, reqStringAt(item, "name", memberPath(at, "name")));
    names.push_back(std::move(name));
  }
  return okStatus();
}

}  // namespace

Result<ResourceSlice> decodeResourceSlice(const json& item, std::string_view path) {
  if (!item.is_object()) return jsonTypeError(path, "an object");
  ResourceSlice out{.raw = &item};
  RDMANET_ASSIGN_OR_RETURN(out.metadata, decodeObjectMeta(item, path));
  const std::string spec_at = memberPath(path, "spec");
  RDMANET_ASSIGN_OR_RETURN(const json* spec, optObject(item, "spec", spec_at));
  if (spec == nullptr) {
    return missing(spec_at);
  }
  RDMANET_ASSIGN_OR_RETURN(out.driver, reqStringAt(*spec, "driver", memberPath(spec_at, "driver")));
  RDMANET_ASSIGN_OR_RETURN(auto node,
                           optString(*spec, "nodeName", memberPath(spec_at, "nodeName")));
  out.node_name = node.value_or("");

  const std::string pool_at = memberPath(spec_at, "pool");
  RDMANET_ASSIGN_OR_RETURN(const json* pool, optObject(*spec, "pool", pool_at));
  if (pool == nullptr) {
    return missing(pool_at);
  }
  RDMANET_ASSIGN_OR_RETURN(out.pool.name, reqStringAt(*pool, "name", memberPath(pool_at, "name")));
  const auto count = [&](const char* key, int64_t& into) -> Status {
    const std::string at = memberPath(pool_at, key);
    const json* v = jsonMember(*pool, key);
    if (v == nullptr) {
      return missing(at);
    }
    RDMANET_ASSIGN_OR_RETURN(into, asInt(*v, at, 0, INT64_MAX));
    return okStatus();
  };
  RDMANET_RETURN_IF_ERROR(count("generation", out.pool.generation));
  RDMANET_RETURN_IF_ERROR(count("resourceSliceCount", out.pool.resource_slice_count));

  RDMANET_RETURN_IF_ERROR(namedList(*spec, "devices", spec_at, out.devices, out.device_names));
  RDMANET_RETURN_IF_ERROR(
      namedList(*spec, "sharedCounters", spec_at, out.shared_counters, out.counter_set_names));
  return out;
}

Result<ResourceSliceList> decodeResourceSliceList(const json& list) {
  if (!list.is_object()) return jsonTypeError("ResourceSliceList", "an object");
  RDMANET_ASSIGN_OR_RETURN(const json* items, optArray(list, "items", "items"));
  ResourceSliceList out;
  if (items == nullptr) return out;
  for (size_t i = 0; i < items->size(); ++i) {
    auto s = decodeResourceSlice((*items)[i], elementPath("items", i));
    if (s.ok()) {
      out.items.push_back(std::move(*s));
    } else {
      out.skipped.push_back(s.error());
    }
  }
  return out;
}

}  // namespace rdmanet::kube
