#pragma once
// A resource.k8s.io/v1 ResourceSlice list as rdmanet reads it (its own node's slices, which the
// slice publisher reconciles): the typed, non-throwing view of each item.
//
// Every field rdmanet reads has its API type, checked: a wrong type, or a key the API requires
// that is missing, is error 7 naming the key's path ("items[2].spec.pool.generation" must be an
// integer). The devices themselves stay JSON (`devices`): the publisher compares them with what
// it would write and carries server-set fields over, so it needs them whole.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/kube/object_meta.h"

namespace rdmanet::kube {

// spec.pool: the pool a slice belongs to, and which of its generation's slices it is.
struct ResourcePool {
  std::string name{};
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
};

struct ResourceSlice {
  ObjectMeta metadata{};
  std::string driver{};     // spec.driver
  std::string node_name{};  // spec.nodeName (absent: "", a slice of no single node)
  ResourcePool pool{};
  std::vector<std::string> device_names{};       // spec.devices[i].name
  std::vector<std::string> counter_set_names{};  // spec.sharedCounters[i].name
  // spec.devices, spec.sharedCounters and the item itself as listed; they point into the
  // decoded document.
  const nlohmann::json* devices = nullptr;  // never null after decoding (absent: an empty array)
  const nlohmann::json* shared_counters = nullptr;  // never null after decoding, like `devices`
  const nlohmann::json* raw = nullptr;
};

// One list item; `path` names it in errors ("items[2]"). Required: spec.driver,
// spec.pool with its name, generation and resourceSliceCount (integers >= 0), each device's
// name and each counter set's name.
Result<ResourceSlice> decodeResourceSlice(const nlohmann::json& item, std::string_view path);

// A list answer ({"items": [...]}): each item that decodes, and for each that does not, its
// error (an item the server holds that rdmanet cannot read is not rdmanet's to judge or delete).
// Error 7 when the answer is not an object or `items` is not an array; absent `items` is none.
struct ResourceSliceList {
  std::vector<ResourceSlice> items{};
  std::vector<Error> skipped{};
};
Result<ResourceSliceList> decodeResourceSliceList(const nlohmann::json& list);

}  // namespace rdmanet::kube
