#include "deviceplugin/dra/dra_device.h"

#include <fmt/format.h>

#include <cctype>
#include <regex>
#include <set>

#include "common/json/json_fields.h"
#include "common/kube/names.h"

namespace rdmanet::dra {
namespace {

bool isCIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// semver.org 2.0.0's published regular expression.
bool isSemver(const std::string& s) {
  static const std::regex re(
      R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))"
      R"((?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?)"
      R"((?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$)");
  return std::regex_match(s, re);
}

// What a device's errors are about (invalidAt's "<where>: <what>").
std::string about(const DraDevice& d) { return fmt::format("DRA device \"{}\"", d.name); }

Status validateAttributeName(const DraDevice& d, const std::string& name) {
  const auto slash = name.find('/');
  const std::string_view id = slash == std::string::npos ? std::string_view(name)
                                                         : std::string_view(name).substr(slash + 1);
  if (slash != std::string::npos) {
    const std::string_view domain = std::string_view(name).substr(0, slash);
    if (!kube::isDnsSubdomain(domain) || domain.size() > kMaxAttributeDomainLength) {
      return invalidAt(about(d),
                       fmt::format("attribute \"{}\": the domain must be a DNS subdomain of at "
                                   "most {} characters",
                                   name, kMaxAttributeDomainLength));
    }
  }
  if (!isCIdentifier(id) || id.size() > kMaxAttributeIdLength) {
    return invalidAt(about(d),
                     fmt::format("attribute \"{}\": the name must be a C identifier of at most {} "
                                 "characters",
                                 name, kMaxAttributeIdLength));
  }
  return okStatus();
}

// The counters of a set or a consumption: 1 to 32, each named by a DNS label. `what` names the
// set or consumption in errors.
Status validateCounters(const Counters& counters, std::string_view where, std::string_view what) {
  if (counters.empty() || counters.size() > kMaxCountersPerSet) {
    return invalidAt(where, fmt::format("{} has {} counters; 1 to {} are allowed", what,
                                        counters.size(), kMaxCountersPerSet));
  }
  for (const auto& [name, value] : counters) {
    if (!kube::isDnsLabel(name)) {
      return invalidAt(where, fmt::format("{}: counter \"{}\" is not a DNS label", what, name));
    }
    if (value.empty()) {
      return invalidAt(where, fmt::format("{}: counter \"{}\" has no quantity", what, name));
    }
  }
  return okStatus();
}

Status validateConsumption(const DraDevice& d) {
  if (d.consumes_counters.size() > kMaxConsumptionsPerDevice) {
    return invalidAt(about(d), fmt::format("{} counter consumptions, at most {} are allowed",
                                           d.consumes_counters.size(), kMaxConsumptionsPerDevice));
  }
  std::set<std::string_view> sets;
  for (const CounterConsumption& c : d.consumes_counters) {
    const std::string what = fmt::format("counter set \"{}\"", c.counter_set);
    if (!kube::isDnsLabel(c.counter_set)) {
      return invalidAt(about(d), fmt::format("{}: the name is not a DNS label", what));
    }
    if (!sets.insert(c.counter_set).second) {
      return invalidAt(about(d), fmt::format("{} is consumed twice", what));
    }
    RDMANET_RETURN_IF_ERROR(validateCounters(c.counters, about(d), what));
  }
  return okStatus();
}

}  // namespace

std::string pciDeviceName(const PciAddress& addr) {
  return fmt::format("pci-{:04x}-{:02x}-{:02x}-{:x}", addr.domain, addr.bus, addr.device,
                     addr.function);
}

std::optional<PciAddress> pciOfDeviceName(std::string_view name) {
  // "pci-0000-81-00-1": the address with ':' and '.' spelled '-'. Parsed strictly, then
  // required to spell back the same, so no other name maps to an address.
  if (name.size() != 16 || name.substr(0, 4) != "pci-") return std::nullopt;
  std::string bdf(name.substr(4));
  bdf[4] = ':';
  bdf[7] = ':';
  bdf[10] = '.';
  auto addr = PciAddress::parse(bdf);
  if (!addr.ok() || pciDeviceName(*addr) != name) return std::nullopt;
  return *addr;
}

Status validateDevice(const DraDevice& d) {
  if (!kube::isDnsLabel(d.name)) {
    return invalidAt(about(d),
                     "the name must be a DNS label (lower-case alphanumerics and '-', at most 63)");
  }
  if (d.attributes.size() + d.capacity.size() > kMaxAttributesPerDevice) {
    return invalidAt(about(d),
                     fmt::format("{} attributes and capacities, at most {} are allowed",
                                 d.attributes.size() + d.capacity.size(), kMaxAttributesPerDevice));
  }
  for (const auto& [name, value] : d.capacity) {
    RDMANET_RETURN_IF_ERROR(validateAttributeName(d, name));
    if (value.value.empty()) {
      return invalidAt(about(d), fmt::format("capacity \"{}\" has no quantity", name));
    }
    if (!value.request_default.empty() && !d.allow_multiple_allocations) {
      return invalidAt(about(d), fmt::format("capacity \"{}\": a request policy needs "
                                             "allowMultipleAllocations",
                                             name));
    }
  }
  RDMANET_RETURN_IF_ERROR(validateConsumption(d));
  for (const auto& [name, value] : d.attributes) {
    RDMANET_RETURN_IF_ERROR(validateAttributeName(d, name));
    const std::string* text = std::get_if<std::string>(&value);
    if (const auto* v = std::get_if<Version>(&value)) {
      text = &v->text;
      if (!isSemver(v->text)) {
        return invalidAt(about(d), fmt::format("attribute \"{}\": \"{}\" is not a semantic version",
                                               name, v->text));
      }
    }
    if (text != nullptr && text->size() > kMaxAttributeValueLength) {
      return invalidAt(about(d),
                       fmt::format("attribute \"{}\": the value is {} characters, at most {} are "
                                   "allowed",
                                   name, text->size(), kMaxAttributeValueLength));
    }
  }
  if (d.taints.size() > kMaxTaintsPerDevice) {
    return invalidAt(about(d), fmt::format("{} taints, at most {} are allowed", d.taints.size(),
                                           kMaxTaintsPerDevice));
  }
  for (const auto& t : d.taints) {
    const auto slash = t.key.find('/');
    const std::string_view key_name = slash == std::string::npos
                                          ? std::string_view(t.key)
                                          : std::string_view(t.key).substr(slash + 1);
    const bool prefix_ok = slash == std::string::npos ||
                           kube::isDnsSubdomain(std::string_view(t.key).substr(0, slash));
    if (!prefix_ok || !kube::isQualifiedNamePart(key_name)) {
      return invalidAt(about(d), fmt::format("taint key \"{}\" is not a label name", t.key));
    }
    if (!t.value.empty() && !kube::isQualifiedNamePart(t.value)) {
      return invalidAt(about(d), fmt::format("taint value \"{}\" is not a label value", t.value));
    }
    if (t.effect != "None" && t.effect != "NoSchedule" && t.effect != "NoExecute") {
      return invalidAt(
          about(d),
          fmt::format("taint effect \"{}\" is not None, NoSchedule or NoExecute", t.effect));
    }
  }
  return okStatus();
}

Status validateCounterSet(const CounterSet& set) {
  const std::string where = fmt::format("DRA counter set \"{}\"", set.name);
  if (!kube::isDnsLabel(set.name)) return invalidAt(where, "the name is not a DNS label");
  return validateCounters(set.counters, where, "the set");
}

}  // namespace rdmanet::dra
