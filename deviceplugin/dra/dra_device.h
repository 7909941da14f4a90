#pragma once
// DraDevice: one device as rdmanet publishes it in a resource.k8s.io/v1 ResourceSlice. The pool
// core fills these (one per VF, or one per PF for a shared pool); slice_builder.h turns them
// into slices and slice_publisher.h keeps the API server in step.
//
// Limits are the API server's (k8s.io/api/resource/v1/types.go); validateDevice() enforces
// them before anything is sent, so a bad attribute is our error, not a 422 at run time.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/base/pci_address.h"
#include "common/base/result.h"

namespace rdmanet::dra {

inline constexpr std::string_view kDefaultDriverName = "rdma.rdmanet.io";
// Devices per slice: the API allows 128, but only 64 once any device carries a taint
// (ResourceSliceMaxDevicesWithAdvancedFeatures), and rdmanet taints unhealthy devices.
inline constexpr size_t kMaxDevicesPerSlice = 64;
inline constexpr size_t kMaxAttributesPerDevice = 32;    // attributes + capacities
inline constexpr size_t kMaxAttributeValueLength = 64;   // string and version values
inline constexpr size_t kMaxTaintsPerDevice = 16;        // DeviceTaintsMaxLength
inline constexpr size_t kMaxAttributeIdLength = 32;      // DeviceMaxIDLength
inline constexpr size_t kMaxAttributeDomainLength = 63;  // DeviceMaxDomainLength
// The API-server feature gate without which `taints` are silently dropped (off by default
// before Kubernetes 1.36).
inline constexpr std::string_view kDeviceTaintsGate = "DRADeviceTaints";
// The gate without which `allowMultipleAllocations` (KEP-5075) is silently dropped.
inline constexpr std::string_view kConsumableCapacityGate = "DRAConsumableCapacity";
// The gate without which `sharedCounters` and `consumesCounters` (KEP-4815) are silently
// dropped: devices are then plain devices, and the scheduler counts nothing.
inline constexpr std::string_view kPartitionableDevicesGate = "DRAPartitionableDevices";
// Counter sets per slice (ResourceSliceMaxCounterSets), counters per set or per consumption
// (ResourceSliceMaxCountersPerCounterSet), and consumptions per device
// (ResourceSliceMaxDeviceCounterConsumptionsPerDevice).
inline constexpr size_t kMaxCounterSetsPerSlice = 8;
inline constexpr size_t kMaxCountersPerSet = 32;
inline constexpr size_t kMaxConsumptionsPerDevice = 2;

// Standard attribute names (k8s.io/dynamic-resource-allocation/deviceattribute).
inline constexpr std::string_view kAttrPcieRoot = "resource.kubernetes.io/pcieRoot";
inline constexpr std::string_view kAttrPciBusId = "resource.kubernetes.io/pciBusID";
inline constexpr std::string_view kAttrNumaNode = "resource.kubernetes.io/numaNode";
// Multus's DRA support reads these.
inline constexpr std::string_view kAttrMultusDeviceId = "k8s.cni.cncf.io/deviceID";
inline constexpr std::string_view kAttrMultusResourceName = "k8s.cni.cncf.io/resourceName";
// A port's bandwidth in bit/s: the counter a PF's counter set holds and each of its VFs consumes
// (KEP-4815), and the capacity a device states.
inline constexpr std::string_view kBandwidthCounter = "bandwidth";
inline constexpr std::string_view kBandwidthCapacity = "rdmanet.io/bandwidth";
// The taint an unhealthy device carries until it recovers.
inline constexpr std::string_view kUnhealthyTaintKey = "rdmanet.io/unhealthy";

// A semantic version attribute (semver.org 2.0.0), as opposed to a plain string.
struct Version {
  std::string text{};
  bool operator==(const Version&) const = default;
};
using AttributeValue = std::variant<std::string, int64_t, bool, Version>;

struct DeviceTaint {
  std::string key{};                  // a label name, e.g. "rdmanet.io/unhealthy"
  std::string value{};                // a label value, may be empty
  std::string effect = "NoSchedule";  // None, NoSchedule or NoExecute
  bool operator==(const DeviceTaint&) const = default;
};

// Counter name (a DNS label) to quantity, in canonical form (kube::decimalQuantity).
using Counters = std::map<std::string, std::string>;

// KEP-4815: a named set of counters the pool offers (a PF's bandwidth); it is published in a
// slice of its own, since the API takes devices or counter sets in one slice, not both.
struct CounterSet {
  std::string name{};  // a DNS label, unique in the pool
  Counters counters{};
  bool operator==(const CounterSet&) const = default;
};

// What a device takes from one counter set while it is allocated.
struct CounterConsumption {
  std::string counter_set{};
  Counters counters{};
  bool operator==(const CounterConsumption&) const = default;
};

// A capacity a device states: its quantity and, for a device many claims share
// (allowMultipleAllocations), how much a claim that names none takes (KEP-5075's
// requestPolicy.default). Built from its quantity alone where no default is wanted.
struct DeviceCapacity {
  std::string value{};
  std::string request_default{};  // "": no requestPolicy
  DeviceCapacity() = default;
  DeviceCapacity(std::string v, std::string request = {})  // NOLINT(google-explicit-constructor)
      : value(std::move(v)), request_default(std::move(request)) {}
  DeviceCapacity(const char* v) : value(v) {}  // NOLINT(google-explicit-constructor)
  bool operator==(const DeviceCapacity&) const = default;
};

struct DraDevice {
  std::string name{};  // a DNS label unique in the node's pool: use pciDeviceName()
  // Qualified name ("<domain>/<C identifier>" or a bare C identifier) to value.
  std::map<std::string, AttributeValue> attributes{};
  std::vector<DeviceTaint> taints{};
  // KEP-5075: many claims may share the device (a `shared` pool's PF). Needs the
  // DRAConsumableCapacity gate on the cluster, so callers set it only behind a flag.
  bool allow_multiple_allocations = false;
  // Qualified name to quantity (canonical form): what a claim's selectors can compare
  // (`device.capacity["rdmanet.io"].bandwidth`). Counts against the 32 attributes.
  std::map<std::string, DeviceCapacity> capacity{};
  // KEP-4815: what the device takes from the pool's counter sets; at most 2.
  std::vector<CounterConsumption> consumes_counters{};
  bool operator==(const DraDevice&) const = default;
};

// The device name for a PCI function: "pci-0000-81-00-1" for 0000:81:00.1. Stable across
// restarts and re-enumeration, since it is the address.
std::string pciDeviceName(const PciAddress& addr);
// Its inverse: the PCI address a device name of this driver names; nullopt for any other name.
std::optional<PciAddress> pciOfDeviceName(std::string_view name);

// Checks one device against the API's rules: name a DNS label; at most 32 attributes and
// capacities; each name
// a qualified name (domain a DNS subdomain of at most 63, identifier a C identifier of at most
// 32); string and version values at most 64 characters, versions semver; at most 16 taints, keys
// label names, values label values, effects None/NoSchedule/NoExecute; at most 2 counter
// consumptions, each of a distinct counter set named by a DNS label, with 1 to 32 counters
// named by DNS labels; a capacity's request default only on a device with
// allowMultipleAllocations. Error 7 naming the device and the attribute, taint or counter.
Status validateDevice(const DraDevice& device);

// Checks a counter set: its name and every counter's a DNS label, 1 to 32 counters. Error 7.
Status validateCounterSet(const CounterSet& set);

}  // namespace rdmanet::dra
