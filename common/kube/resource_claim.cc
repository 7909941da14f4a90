#include "common/kube/resource_claim.h"

#include <fmt/format.h>

#include "common/json/json_fields.h"
#include "common/kube/quantity.h"

namespace rdmanet::kube {

using nlohmann::json;

namespace {

// Each element of the array at `key` of `obj` (absent: none), as an object, with its path.
template <typename F>
Status forEachObject(const json* obj, std::string_view key, const std::string& path, F&& each) {
  if (obj == nullptr) return okStatus();
  RDMANET_ASSIGN_OR_RETURN(const json* arr, optArray(*obj, key, path));
  if (arr == nullptr) return okStatus();
  for (size_t i = 0; i < arr->size(); ++i) {
    const json& e = (*arr)[i];
    const std::string at = elementPath(path, i);
    if (!e.is_object()) return jsonTypeError(at, "an object");
    RDMANET_RETURN_IF_ERROR(each(e, at));
  }
  return okStatus();
}

// The object at `key` of `obj` (nullptr when `obj` is nullptr or the member is absent).
Result<const json*> child(const json* obj, std::string_view key, const std::string& path) {
  if (obj == nullptr) return static_cast<const json*>(nullptr);
  return optObject(*obj, key, path);
}

Result<std::string> req(const json& obj, const char* key, std::string_view at) {
  return reqStringAt(obj, key, memberPath(at, key));
}

// consumedCapacity of the result at `at`: capacity name -> quantity, each a string the API wrote.
Result<std::map<std::string, int64_t>> consumedCapacity(const json& r, const std::string& at) {
  const std::string path = memberPath(at, "consumedCapacity");
  RDMANET_ASSIGN_OR_RETURN(const json* obj, optObject(r, "consumedCapacity", path));
  std::map<std::string, int64_t> out;
  if (obj == nullptr) return out;
  for (const auto& [name, value] : obj->items()) {
    const std::string entry = fmt::format("{}[\"{}\"]", path, name);
    if (!value.is_string()) return jsonTypeError(entry, "a quantity string");
    auto q = parseQuantity(value.get_ref<const std::string&>());
    if (!q.ok()) return q.error().context(entry);
    out.emplace(name, *q);
  }
  return out;
}

}  // namespace

Result<ResourceClaim> decodeResourceClaim(const json& claim) {
  if (!claim.is_object()) return jsonTypeError("ResourceClaim", "an object");
  ResourceClaim out;
  RDMANET_ASSIGN_OR_RETURN(out.metadata, decodeObjectMeta(claim, ""));

  RDMANET_ASSIGN_OR_RETURN(const json* spec, child(&claim, "spec", "spec"));
  RDMANET_ASSIGN_OR_RETURN(const json* spec_devices, child(spec, "devices", "spec.devices"));
  RDMANET_RETURN_IF_ERROR(forEachObject(spec_devices, "requests", "spec.devices.requests",
                                        [&](const json& r, const std::string& at) -> Status {
                                          RDMANET_ASSIGN_OR_RETURN(std::string name,
                                                                   req(r, "name", at));
                                          out.requests.push_back({.name = std::move(name)});
                                          return okStatus();
                                        }));

  RDMANET_ASSIGN_OR_RETURN(const json* status, child(&claim, "status", "status"));
  RDMANET_ASSIGN_OR_RETURN(const json* alloc, child(status, "allocation", "status.allocation"));
  RDMANET_ASSIGN_OR_RETURN(const json* alloc_devices,
                           child(alloc, "devices", "status.allocation.devices"));
  const std::string results_at = "status.allocation.devices.results";
  if (alloc_devices != nullptr) {
    RDMANET_ASSIGN_OR_RETURN(const json* results, optArray(*alloc_devices, "results", results_at));
    out.allocated = results != nullptr;
  }
  RDMANET_RETURN_IF_ERROR(forEachObject(
      alloc_devices, "results", results_at, [&](const json& r, const std::string& at) -> Status {
        DeviceAllocationResult d;
        RDMANET_ASSIGN_OR_RETURN(d.request, req(r, "request", at));
        RDMANET_ASSIGN_OR_RETURN(d.driver, req(r, "driver", at));
        RDMANET_ASSIGN_OR_RETURN(d.pool, req(r, "pool", at));
        RDMANET_ASSIGN_OR_RETURN(d.device, req(r, "device", at));
        RDMANET_ASSIGN_OR_RETURN(d.share_id, optString(r, "shareID", memberPath(at, "shareID")));
        RDMANET_ASSIGN_OR_RETURN(auto admin,
                                 optBool(r, "adminAccess", memberPath(at, "adminAccess")));
        d.admin_access = admin.value_or(false);
        RDMANET_ASSIGN_OR_RETURN(d.consumed_capacity, consumedCapacity(r, at));
        out.results.push_back(std::move(d));
        return okStatus();
      }));

  RDMANET_RETURN_IF_ERROR(forEachObject(
      status, "reservedFor", "status.reservedFor",
      [&](const json& r, const std::string& at) -> Status {
        ConsumerReference c;
        RDMANET_ASSIGN_OR_RETURN(auto group, optString(r, "apiGroup", memberPath(at, "apiGroup")));
        c.api_group = group.value_or("");
        RDMANET_ASSIGN_OR_RETURN(c.resource, req(r, "resource", at));
        RDMANET_ASSIGN_OR_RETURN(c.name, req(r, "name", at));
        RDMANET_ASSIGN_OR_RETURN(c.uid, req(r, "uid", at));
        out.reserved_for.push_back(std::move(c));
        return okStatus();
      }));

  RDMANET_RETURN_IF_ERROR(forEachObject(
      status, "devices", "status.devices", [&](const json& e, const std::string& at) -> Status {
        AllocatedDeviceStatus d{.raw = &e};
        RDMANET_ASSIGN_OR_RETURN(d.driver, req(e, "driver", at));
        RDMANET_ASSIGN_OR_RETURN(d.pool, req(e, "pool", at));
        RDMANET_ASSIGN_OR_RETURN(d.device, req(e, "device", at));
        RDMANET_ASSIGN_OR_RETURN(d.share_id, optString(e, "shareID", memberPath(at, "shareID")));
        out.devices.push_back(std::move(d));
        return okStatus();
      }));
  return out;
}

}  // namespace rdmanet::kube
