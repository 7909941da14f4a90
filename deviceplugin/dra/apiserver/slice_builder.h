#pragma once
// Turning DraDevices into resource.k8s.io/v1 ResourceSlice objects for one node's pool.
//
// Pure functions: no I/O. The pool is named after the node and holds every device of this
// driver on it; devices are sorted by name and cut into slices of at most 64, so the same
// inventory always gives the same slices. Counter sets (KEP-4815), which the API does not take in
// a slice that holds devices, follow in slices of their own, at most 8 sets each.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/dra/dra_device.h"

namespace rdmanet::dra {

inline constexpr const char* kResourceSlicesPath = "/apis/resource.k8s.io/v1/resourceslices";

// Who publishes: the driver, and the node whose pool it is (the Node's uid for the owner
// reference, so the slices are garbage-collected with the Node).
struct SliceOwner {
  std::string driver = std::string(kDefaultDriverName);
  std::string node_name{};
  std::string node_uid{};
};

// One slice's devices: pointers into the vector given to deviceGroups().
using DeviceGroup = std::vector<const DraDevice*>;

// The devices, validated (validateDevice), checked for duplicate names, sorted by name, in
// groups of at most `per_slice`. No devices give no groups. Error 7 naming the device at fault.
// The publisher keeps groups and builds one chunk's JSON at a time (chunkJson): the JSON of
// every device at once is several times the size of the devices themselves.
Result<std::vector<DeviceGroup>> deviceGroups(const std::vector<DraDevice>& devices,
                                              size_t per_slice = kMaxDevicesPerSlice);

// One group as the JSON of ResourceSlice spec.devices[] entries (deviceJson, in order).
nlohmann::json chunkJson(const DeviceGroup& group);

// One slice's content: a group of devices, or (when `counter_sets` is not empty) counter sets.
// Pointers into the vectors given to sliceChunks().
struct SliceChunk {
  DeviceGroup devices{};
  std::vector<const CounterSet*> counter_sets{};

  bool holdsCounters() const { return !counter_sets.empty(); }
  // The spec field it fills: "devices" or "sharedCounters".
  const char* specKey() const { return holdsCounters() ? "sharedCounters" : "devices"; }
};

// Every slice's content: the device groups (deviceGroups), then the counter sets, validated
// (validateCounterSet), unique by name, sorted, at most 8 a slice. Error 7 as deviceGroups', or
// naming a device that consumes a counter set or counter the sets do not hold (the scheduler
// would never allocate it).
Result<std::vector<SliceChunk>> sliceChunks(const std::vector<DraDevice>& devices,
                                            const std::vector<CounterSet>& counter_sets,
                                            size_t per_slice = kMaxDevicesPerSlice);

// The JSON of a chunk's spec field (specKey()): devices (chunkJson) or counter sets.
nlohmann::json chunkJson(const SliceChunk& chunk);

// One device as spec.devices[] JSON: name, attributes ({"string"|"int"|"bool"|"version": v}),
// capacity ({"value": q, "requestPolicy": {"default": q}}), consumesCounters, taints and
// allowMultipleAllocations when set.
nlohmann::json deviceJson(const DraDevice& device);

// One counter set as spec.sharedCounters[] JSON: {"name", "counters": {c: {"value": q}}}.
nlohmann::json counterSetJson(const CounterSet& set);

// A ResourceSlice object for one chunk: apiVersion/kind, metadata.generateName
// ("<node>-<driver>-", shortened as the API server would), the Node owner reference, and spec
// {driver, nodeName, pool {name: node, generation, resourceSliceCount}, <spec_key>: content}.
nlohmann::json sliceObject(const SliceOwner& owner, const char* spec_key,
                           const nlohmann::json& content, int64_t generation, int64_t slice_count);

// Every slice for `devices` and `counter_sets` at `generation`. Validates the owner too (node
// name a DNS subdomain, driver a DNS subdomain of at most 63). Error 7.
Result<std::vector<nlohmann::json>> buildSlices(const std::vector<DraDevice>& devices,
                                                const SliceOwner& owner, int64_t generation,
                                                const std::vector<CounterSet>& counter_sets = {});

// The comparable form of a spec.devices[] array as stored: only the fields rdmanet writes, with
// what the server adds (taints' timeAdded) removed; without taints when `with_taints` is false,
// without allowMultipleAllocations and capacities' requestPolicy when `with_multiple_allocations`
// is false (fields the server drops while their feature gate is off).
nlohmann::json comparableDevices(const nlohmann::json& devices, bool with_taints,
                                 bool with_multiple_allocations = true);

// The comparable form of a spec.sharedCounters[] array as stored: names and counter values.
nlohmann::json comparableCounterSets(const nlohmann::json& sets);

}  // namespace rdmanet::dra
