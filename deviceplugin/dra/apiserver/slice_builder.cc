#include "deviceplugin/dra/apiserver/slice_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/kube/names.h"

namespace rdmanet::dra {
namespace {

using json = nlohmann::json;

// The API server appends 5 random characters to a generateName and keeps the result within 63
// (apiserver's names.SimpleNameGenerator: the base is cut to 58).
constexpr size_t kMaxGenerateNameBase = 58;

std::string generateName(const SliceOwner& o) {
  std::string driver = o.driver;
  std::replace(driver.begin(), driver.end(), '.', '-');
  std::string base = o.node_name + "-" + driver;
  if (base.size() > kMaxGenerateNameBase - 1) base.resize(kMaxGenerateNameBase - 1);
  // A cut may end in '.' or '-': "<label>.-xxxxx" would not be a DNS subdomain.
  while (!base.empty() && (base.back() == '.' || base.back() == '-')) base.pop_back();
  return base + "-";
}

json countersJson(const Counters& counters) {
  json out = json::object();
  for (const auto& [name, value] : counters) out[name] = {{"value", value}};
  return out;
}

// A stored counters object ({c: {"value": q}}) with only the values, for comparison.
json comparableCounters(const json& counters) {
  json out = json::object();
  if (!counters.is_object()) return out;
  for (const auto& [name, c] : counters.items()) {
    out[name] = c.is_object() && c.contains("value") ? c["value"] : json();
  }
  return out;
}

}  // namespace

json deviceJson(const DraDevice& d) {
  json dev = {{"name", d.name}};
  if (!d.attributes.empty()) {
    json attrs = json::object();
    for (const auto& [attr_name, value] : d.attributes) {
      // clang (14) cannot capture a structured binding in a lambda: name it first.
      const auto& name = attr_name;
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
              attrs[name] = {{"string", v}};
            } else if constexpr (std::is_same_v<T, int64_t>) {
              attrs[name] = {{"int", v}};
            } else if constexpr (std::is_same_v<T, bool>) {
              attrs[name] = {{"bool", v}};
            } else {
              attrs[name] = {{"version", v.text}};
            }
          },
          value);
    }
    dev["attributes"] = std::move(attrs);
  }
  if (!d.taints.empty()) {
    json taints = json::array();
    for (const auto& t : d.taints) {
      json tj = {{"key", t.key}, {"effect", t.effect}};
      if (!t.value.empty()) tj["value"] = t.value;
      taints.push_back(std::move(tj));
    }
    dev["taints"] = std::move(taints);
  }
  if (d.allow_multiple_allocations) dev["allowMultipleAllocations"] = true;
  if (!d.capacity.empty()) {
    json caps = json::object();
    for (const auto& [name, cap] : d.capacity) {
      json c = {{"value", cap.value}};
      if (!cap.request_default.empty()) c["requestPolicy"] = {{"default", cap.request_default}};
      caps[name] = std::move(c);
    }
    dev["capacity"] = std::move(caps);
  }
  if (!d.consumes_counters.empty()) {
    json consumes = json::array();
    for (const auto& c : d.consumes_counters) {
      consumes.push_back({{"counterSet", c.counter_set}, {"counters", countersJson(c.counters)}});
    }
    dev["consumesCounters"] = std::move(consumes);
  }
  return dev;
}

json counterSetJson(const CounterSet& set) {
  return {{"name", set.name}, {"counters", countersJson(set.counters)}};
}

Result<std::vector<DeviceGroup>> deviceGroups(const std::vector<DraDevice>& devices,
                                              size_t per_slice) {
  if (per_slice == 0 || per_slice > kMaxDevicesPerSlice) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("devices per slice must be 1..{}", kMaxDevicesPerSlice));
  }
  std::vector<const DraDevice*> sorted;
  std::set<std::string> names;
  for (const auto& d : devices) {
    RDMANET_RETURN_IF_ERROR(validateDevice(d));
    if (!names.insert(d.name).second) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("DRA device name \"{}\" is used twice", d.name));
    }
    sorted.push_back(&d);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const DraDevice* a, const DraDevice* b) { return a->name < b->name; });
  std::vector<DeviceGroup> groups;
  for (size_t i = 0; i < sorted.size(); i += per_slice) {
    const auto end =
        sorted.begin() + static_cast<std::ptrdiff_t>(std::min(sorted.size(), i + per_slice));
    groups.emplace_back(sorted.begin() + static_cast<std::ptrdiff_t>(i), end);
  }
  return groups;
}

json chunkJson(const DeviceGroup& group) {
  json chunk = json::array();
  for (const DraDevice* d : group) chunk.push_back(deviceJson(*d));
  return chunk;
}

Result<std::vector<SliceChunk>> sliceChunks(const std::vector<DraDevice>& devices,
                                            const std::vector<CounterSet>& counter_sets,
                                            size_t per_slice) {
  RDMANET_ASSIGN_OR_RETURN(auto groups, deviceGroups(devices, per_slice));
  std::map<std::string_view, const CounterSet*> sets;
  for (const CounterSet& set : counter_sets) {
    RDMANET_RETURN_IF_ERROR(validateCounterSet(set));
    if (!sets.emplace(set.name, &set).second) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("DRA counter set \"{}\" is defined twice", set.name));
    }
  }
  for (const DraDevice& d : devices) {
    for (const CounterConsumption& c : d.consumes_counters) {
      auto it = sets.find(c.counter_set);
      for (const auto& [counter, value] : c.counters) {
        if (it == sets.end() || !it->second->counters.contains(counter)) {
          return makeError(ErrorCode::kInvalidConfig,
                           fmt::format("DRA device \"{}\" consumes counter \"{}\" of counter set "
                                       "\"{}\", which the pool does not define",
                                       d.name, counter, c.counter_set));
        }
      }
    }
  }
  std::vector<SliceChunk> chunks;
  chunks.reserve(groups.size() +
                 (sets.size() + kMaxCounterSetsPerSlice - 1) / kMaxCounterSetsPerSlice);
  for (auto& g : groups) chunks.push_back({.devices = std::move(g)});
  for (const auto& [name, set] : sets) {  // sorted by name
    if (chunks.empty() || !chunks.back().holdsCounters() ||
        chunks.back().counter_sets.size() == kMaxCounterSetsPerSlice) {
      chunks.emplace_back();
    }
    chunks.back().counter_sets.push_back(set);
  }
  return chunks;
}

json chunkJson(const SliceChunk& chunk) {
  if (!chunk.holdsCounters()) return chunkJson(chunk.devices);
  json out = json::array();
  for (const CounterSet* set : chunk.counter_sets) out.push_back(counterSetJson(*set));
  return out;
}

json sliceObject(const SliceOwner& owner, const char* spec_key, const json& content,
                 int64_t generation, int64_t slice_count) {
  json meta = {{"generateName", generateName(owner)}};
  if (!owner.node_uid.empty()) {
    meta["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                            {"kind", "Node"},
                                            {"name", owner.node_name},
                                            {"uid", owner.node_uid},
                                            {"controller", true}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", std::move(meta)},
          {"spec",
           {{"driver", owner.driver},
            {"nodeName", owner.node_name},
            {"pool",
             {{"name", owner.node_name},
              {"generation", generation},
              {"resourceSliceCount", slice_count}}},
            {spec_key, content}}}};
}

Result<std::vector<json>> buildSlices(const std::vector<DraDevice>& devices,
                                      const SliceOwner& owner, int64_t generation,
                                      const std::vector<CounterSet>& counter_sets) {
  if (!kube::isDnsSubdomain(owner.node_name)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("node name \"{}\" is not a DNS subdomain", owner.node_name));
  }
  if (!kube::isDnsSubdomain(owner.driver) || owner.driver.size() > 63) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("driver name \"{}\" is not a DNS subdomain of at most 63 "
                                 "characters",
                                 owner.driver));
  }
  RDMANET_ASSIGN_OR_RETURN(auto chunks, sliceChunks(devices, counter_sets));
  std::vector<json> slices;
  slices.reserve(chunks.size());
  for (const auto& c : chunks) {
    slices.push_back(sliceObject(owner, c.specKey(), chunkJson(c), generation,
                                 static_cast<int64_t>(chunks.size())));
  }
  return slices;
}

json comparableDevices(const json& devices, bool with_taints, bool with_multiple_allocations) {
  json out = json::array();
  if (!devices.is_array()) return out;
  for (const auto& d : devices) {
    if (!d.is_object()) continue;
    json c = {{"name", d.value("name", "")}};
    if (d.contains("attributes") && !d["attributes"].empty()) c["attributes"] = d["attributes"];
    if (with_taints && d.contains("taints") && d["taints"].is_array() && !d["taints"].empty()) {
      json taints = json::array();
      for (const auto& t : d["taints"]) {
        json tc = {{"key", t.value("key", "")}, {"effect", t.value("effect", "")}};
        if (!t.value("value", "").empty()) tc["value"] = t["value"];
        taints.push_back(std::move(tc));
      }
      c["taints"] = std::move(taints);
    }
    if (with_multiple_allocations && d.value("allowMultipleAllocations", false)) {
      c["allowMultipleAllocations"] = true;
    }
    if (d.contains("capacity") && d["capacity"].is_object() && !d["capacity"].empty()) {
      json caps = json::object();
      for (const auto& [name, cap] : d["capacity"].items()) {
        json c = {{"value", cap.is_object() && cap.contains("value") ? cap["value"] : json()}};
        // requestPolicy is gated with allowMultipleAllocations (DRAConsumableCapacity).
        if (with_multiple_allocations && cap.is_object() && cap.contains("requestPolicy") &&
            cap["requestPolicy"].is_object() && cap["requestPolicy"].contains("default")) {
          c["default"] = cap["requestPolicy"]["default"];
        }
        caps[name] = std::move(c);
      }
      c["capacity"] = std::move(caps);
    }
    if (d.contains("consumesCounters") && d["consumesCounters"].is_array() &&
        !d["consumesCounters"].empty()) {
      json consumes = json::array();
      for (const auto& cc : d["consumesCounters"]) {
        if (!cc.is_object()) continue;
        consumes.push_back({{"counterSet", cc.value("counterSet", "")},
                            {"counters", comparableCounters(cc.value("counters", json()))}});
      }
      c["consumesCounters"] = std::move(consumes);
    }
    out.push_back(std::move(c));
  }
  return out;
}

json comparableCounterSets(const json& sets) {
  json out = json::array();
  if (!sets.is_array()) return out;
  for (const auto& s : sets) {
    if (!s.is_object()) continue;
    out.push_back({{"name", s.value("name", "")},
                   {"counters", comparableCounters(s.value("counters", json()))}});
  }
  return out;
}

}  // namespace rdmanet::dra
