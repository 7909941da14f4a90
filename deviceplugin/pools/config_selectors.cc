// Parsing and cross-checking of `selectors` (see config.h for the accepted keys).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/base/enum_names.h"
#include "common/inventory/netdev.h"
#include "common/json/json_access.h"
#include "common/json/json_fields.h"
#include "deviceplugin/pools/config_internal.h"

namespace rdmanet::dp {

using nlohmann::json;

namespace {

bool isHexId(std::string_view s) {
  return s.size() == 4 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<int> parseIndex(std::string_view s, std::string_view key) {
  int n = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || p != s.data() + s.size() || n < 0 || n > 4095) {
    return invalidAt(key, fmt::format("\"{}\" is not a VF index (0-4095)", s));
  }
  return n;
}

// The link layers a selector may name, in any case ("eth" is ether's short name).
constexpr EnumName<std::string_view> kLinkTypes[] = {
    {"ether", "ether"}, {"infiniband", "infiniband"}, {"eth", "ether"}};

// Keys sriov-network-device-plugin knows that rdmanet does not implement.
bool isUnsupportedSriovKey(std::string_view k) {
  return k == "ddpProfiles" || k == "needVhostNet" || k == "vdpaType" || k == "pKeys" ||
         k == "acpiIndexes" || k == "auxTypes";
}

Result<Selector> parseSelector(const json& j, const std::string& key) {
  if (!j.is_object()) return invalidAt(key, "must be an object");
  Selector s;
  for (const auto& [k, v] : j.items()) {
    std::string sub = fmt::format("{}.{}", key, k);
    if (k == "isRdma") {
      RDMANET_ASSIGN_OR_RETURN(s.is_rdma, asBool(v, sub));
      continue;
    }
    if (isUnsupportedSriovKey(k)) {
      return makeError(ErrorCode::kUnsupportedField, fmt::format("{}: not supported", sub));
    }
    bool known = k == "vendors" || k == "devices" || k == "deviceIDs" || k == "drivers" ||
                 k == "pciAddresses" || k == "pfNames" || k == "rootDevices" || k == "linkTypes" ||
                 k == "ifNames";
    if (!known) return invalidAt(sub, "unknown key");
    RDMANET_ASSIGN_OR_RETURN(std::vector<std::string> vals, asStringArray(v, sub));
    for (size_t i = 0; i < vals.size(); ++i) {
      std::string item = fmt::format("{}[{}]", sub, i);
      const std::string& val = vals[i];
      if (k == "vendors" || k == "devices" || k == "deviceIDs") {
        if (!isHexId(val))
          return invalidAt(item, fmt::format("\"{}\" is not a 4-digit hex ID", val));
        (k == "vendors" ? s.vendors : s.devices).push_back(lower(val));
      } else if (k == "drivers") {
        if (val.empty() || val.size() > 64 || val.find('/') != std::string::npos) {
          return invalidAt(item, fmt::format("\"{}\" is not a driver name", val));
        }
        s.drivers.push_back(val);
      } else if (k == "pciAddresses") {
        auto a = PciAddress::parse(val);
        if (!a.ok()) return invalidAt(item, fmt::format("\"{}\" is not a PCI address", val));
        s.pci_addresses.push_back(*a);
      } else if (k == "pfNames" || k == "rootDevices") {
        RDMANET_ASSIGN_OR_RETURN(DeviceRef r, parseDeviceRef(val, k == "rootDevices", item));
        (k == "pfNames" ? s.pf_names : s.root_devices).push_back(std::move(r));
      } else if (k == "linkTypes") {
        auto t = enumOf<std::string_view>(kLinkTypes, val, WordCase::kFold);
        if (!t) return notOneOfAt(item, val, enumWords<std::string_view>(kLinkTypes));
        s.link_types.emplace_back(*t);
      } else {  // ifNames
        if (!isValidIfName(val)) {
          return invalidAt(item, fmt::format("\"{}\" is not an interface name", val));
        }
        s.if_names.push_back(val);
      }
    }
  }
  return s;
}

bool rangesOverlap(const DeviceRef& a, const DeviceRef& b) {
  if (a.pf != b.pf) return false;
  if (!a.vf_indexes || !b.vf_indexes) return true;
  for (int i : *a.vf_indexes) {
    if (b.vf_indexes->count(i)) return true;
  }
  return false;
}

std::string refText(const DeviceRef& r) {
  if (!r.vf_indexes) return r.pf;
  std::string s = r.pf + "#";
  bool first = true;
  for (int i : *r.vf_indexes) {
    s += fmt::format("{}{}", first ? "" : ",", i);
    first = false;
  }
  return s;
}

// The first explicit overlap between two pools' selectors, as "<key>: <what>", or "".
std::string findOverlap(const PoolConfig& a, const PoolConfig& b) {
  for (const Selector& sb : b.selectors) {
    for (const Selector& sa : a.selectors) {
      for (const auto& addr : sb.pci_addresses) {
        if (std::find(sa.pci_addresses.begin(), sa.pci_addresses.end(), addr) !=
            sa.pci_addresses.end()) {
          return fmt::format("pciAddresses: {}", addr.str());
        }
      }
      for (const auto& rb : sb.pf_names) {
        for (const auto& ra : sa.pf_names) {
          if (rangesOverlap(ra, rb))
            return fmt::format("pfNames: \"{}\" and \"{}\"", refText(ra), refText(rb));
        }
      }
      for (const auto& rb : sb.root_devices) {
        for (const auto& ra : sa.root_devices) {
          if (rangesOverlap(ra, rb)) {
            return fmt::format("rootDevices: \"{}\" and \"{}\"", refText(ra), refText(rb));
          }
        }
      }
      for (const auto& n : sb.if_names) {
        if (std::find(sa.if_names.begin(), sa.if_names.end(), n) != sa.if_names.end()) {
          return fmt::format("ifNames: {}", n);
        }
      }
    }
  }
  return "";
}

}  // namespace

Result<DeviceRef> parseDeviceRef(std::string_view text, bool is_address, std::string_view key) {
  DeviceRef r;
  size_t hash = text.find('#');
  std::string_view head = text.substr(0, hash);
  if (is_address) {
    auto a = PciAddress::parse(head);
    if (!a.ok()) return invalidAt(key, fmt::format("\"{}\" is not a PCI address", head));
    r.pf = a->str();
  } else {
    if (!isValidIfName(head)) {
      return invalidAt(key, fmt::format("\"{}\" is not an interface name", head));
    }
    r.pf = std::string(head);
  }
  if (hash == std::string_view::npos) return r;
  std::string_view ranges = text.substr(hash + 1);
  if (ranges.empty()) return invalidAt(key, fmt::format("\"{}\" has an empty VF range", text));
  std::set<int> idx;
  while (!ranges.empty()) {
    size_t comma = ranges.find(',');
    std::string_view part = ranges.substr(0, comma);
    ranges = comma == std::string_view::npos ? std::string_view{} : ranges.substr(comma + 1);
    if (comma != std::string_view::npos && ranges.empty()) {
      return invalidAt(key, fmt::format("\"{}\" ends with ','", text));
    }
    size_t dash = part.find('-');
    RDMANET_ASSIGN_OR_RETURN(int lo, parseIndex(part.substr(0, dash), key));
    int hi = lo;
    if (dash != std::string_view::npos) {
      RDMANET_ASSIGN_OR_RETURN(hi, parseIndex(part.substr(dash + 1), key));
      if (hi < lo) return invalidAt(key, fmt::format("\"{}\": range {} is backwards", text, part));
    }
    for (int i = lo; i <= hi; ++i) idx.insert(i);
  }
  r.vf_indexes = std::move(idx);
  return r;
}

Result<std::vector<Selector>> parseSelectors(const json& j, const std::string& key,
                                             bool /*from_config_list*/) {
  std::vector<Selector> out;
  if (j.is_object()) {
    RDMANET_ASSIGN_OR_RETURN(Selector s, parseSelector(j, key));
    out.push_back(std::move(s));
    return out;
  }
  if (!j.is_array()) return invalidAt(key, "must be an object or a list of objects");
  for (size_t i = 0; i < j.size(); ++i) {
    RDMANET_ASSIGN_OR_RETURN(Selector s, parseSelector(j[i], fmt::format("{}[{}]", key, i)));
    out.push_back(std::move(s));
  }
  return out;
}

Status checkPools(const std::vector<PoolConfig>& pools) {
  for (size_t b = 0; b < pools.size(); ++b) {
    for (size_t a = 0; a < b; ++a) {
      if (pools[a].fullName() == pools[b].fullName()) {
        return invalidAt(
            pools[b].key + ".resourceName",
            fmt::format("\"{}\" is already used by {}", pools[b].fullName(), pools[a].key));
      }
      if (pools[a].mode != pools[b].mode) continue;
      std::string what = findOverlap(pools[a], pools[b]);
      if (!what.empty()) {
        return invalidAt(
            pools[b].key + ".selectors",
            fmt::format("overlaps {} ({}) on {}", pools[a].key, pools[a].fullName(), what));
      }
    }
  }
  return okStatus();
}

}  // namespace rdmanet::dp
