#include "deviceplugin/pools/config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/base/bandwidth_limit.h"
#include "common/base/enum_names.h"
#include "common/inventory/netdev.h"
#include "common/json/json_access.h"
#include "common/json/json_fields.h"
#include "common/kube/names.h"
#include "common/os/read_file.h"
#include "deviceplugin/pools/config_internal.h"

namespace rdmanet::dp {

using nlohmann::json;

namespace {

constexpr EnumName<PoolMode> kPoolModes[] = {{"vf", PoolMode::kVf}, {"shared", PoolMode::kShared}};
constexpr EnumName<AllocationPolicy> kPolicies[] = {{"pack", AllocationPolicy::kPack},
                                                    {"spread", AllocationPolicy::kSpread},
                                                    {"gpu-near", AllocationPolicy::kGpuNear}};

}  // namespace

std::string_view poolModeName(PoolMode m) { return nameOf<PoolMode>(kPoolModes, m); }

std::string_view policyName(AllocationPolicy p) { return nameOf<AllocationPolicy>(kPolicies, p); }

bool PoolConfig::sameAs(const PoolConfig& o) const {
  return resource_prefix == o.resource_prefix && resource_name == o.resource_name &&
         mode == o.mode && exclude_topology == o.exclude_topology &&
         rdma_hca_max == o.rdma_hca_max && lossless == o.lossless &&
         preferred_allocation == o.preferred_allocation && selectors == o.selectors &&
         pod_info_dir == o.pod_info_dir && vf_bandwidth_mbps == o.vf_bandwidth_mbps &&
         claim_bandwidth_mbps == o.claim_bandwidth_mbps;
}

namespace {

Result<Lossless> parseLossless(const json& j, const std::string& key) {
  if (!j.is_object()) return invalidAt(key, "must be an object {\"priority\", \"dscp\"}");
  Lossless l;
  for (const auto& [k, v] : j.items()) {
    std::string sub = fmt::format("{}.{}", key, k);
    if (k == "priority") {
      RDMANET_ASSIGN_OR_RETURN(int64_t n, asInt(v, sub, 0, 7));
      l.priority = static_cast<int>(n);
    } else if (k == "dscp") {
      RDMANET_ASSIGN_OR_RETURN(int64_t n, asInt(v, sub, 0, 63));
      l.dscp = static_cast<int>(n);
    } else {
      return invalidAt(sub, "unknown key");
    }
  }
  if (!l.priority && !l.dscp) return invalidAt(key, "needs \"priority\" and/or \"dscp\"");
  return l;
}

// One entry of resourceList (shared == false) or configList (shared == true).
Result<PoolConfig> parsePool(const json& j, const std::string& key, bool from_config_list,
                             const std::string& top_prefix) {
  if (!j.is_object()) return invalidAt(key, "must be an object");
  PoolConfig p;
  p.key = key;
  p.resource_prefix = top_prefix;
  p.mode = from_config_list ? PoolMode::kShared : PoolMode::kVf;
  bool has_mode = false, has_max = false;
  for (const auto& [k, v] : j.items()) {
    std::string sub = fmt::format("{}.{}", key, k);
    if (k == "resourceName") {
      RDMANET_ASSIGN_OR_RETURN(p.resource_name, asString(v, sub));
      // The part after the prefix: what kubelet accepts.
      if (!kube::isQualifiedNamePart(p.resource_name)) {
        return invalidAt(sub, fmt::format("\"{}\" is not a valid resource name (alphanumerics, "
                                          "'-', '_', '.', at most 63)",
                                          p.resource_name));
      }
    } else if (k == "resourcePrefix") {
      RDMANET_ASSIGN_OR_RETURN(p.resource_prefix, asString(v, sub));
      if (!kube::isDnsSubdomain(p.resource_prefix)) {
        return invalidAt(sub, fmt::format("\"{}\" is not a DNS subdomain", p.resource_prefix));
      }
    } else if (k == "deviceType" && !from_config_list) {
      RDMANET_ASSIGN_OR_RETURN(std::string t, asString(v, sub));
      if (t != "netDevice") {
        return makeError(ErrorCode::kUnsupportedField,
                         fmt::format("{}: \"{}\" is not supported (only \"netDevice\")", sub, t));
      }
    } else if (k == "excludeTopology") {
      RDMANET_ASSIGN_OR_RETURN(p.exclude_topology, asBool(v, sub));
    } else if (k == "selectors") {
      RDMANET_ASSIGN_OR_RETURN(p.selectors, parseSelectors(v, sub, from_config_list));
    } else if (k == "rdmaHcaMax") {
      RDMANET_ASSIGN_OR_RETURN(int64_t n, asInt(v, sub, 1, 10000));
      p.rdma_hca_max = static_cast<int>(n);
      has_max = true;
    } else if (k == "mode") {
      RDMANET_ASSIGN_OR_RETURN(p.mode, asEnum<PoolMode>(v, sub, kPoolModes, notOneOfAt));
      has_mode = true;
    } else if (k == "lossless") {
      RDMANET_ASSIGN_OR_RETURN(Lossless l, parseLossless(v, sub));
      p.lossless = l;
    } else if (k == "preferredAllocation") {
      RDMANET_ASSIGN_OR_RETURN(p.preferred_allocation,
                               asEnum<AllocationPolicy>(v, sub, kPolicies, notOneOfAt));
    } else if (k == "vfBandwidthMbps") {
      RDMANET_ASSIGN_OR_RETURN(p.vf_bandwidth_mbps, asInt(v, sub, 1, kMaxBandwidthMbps));
    } else if (k == "claimBandwidthMbps") {
      RDMANET_ASSIGN_OR_RETURN(p.claim_bandwidth_mbps, asInt(v, sub, 1, kMaxBandwidthMbps));
    } else if (k == "podInfoDir") {
      RDMANET_ASSIGN_OR_RETURN(p.pod_info_dir, asString(v, sub));
      const std::string& d = p.pod_info_dir;
      if (d.empty() || d[0] != '/' || d.find("/..") != std::string::npos || d.size() > 200) {
        return invalidAt(sub, "must be an absolute path without \"..\"");
      }
    } else {
      return invalidAt(sub, "unknown key");
    }
  }
  (void)has_mode;
  if (p.resource_name.empty()) return invalidAt(key + ".resourceName", "is required");
  if (has_max && p.mode != PoolMode::kShared) {
    return invalidAt(key + ".rdmaHcaMax", "applies only to mode \"shared\"");
  }
  // A shared PF is not split into partitions: its share is per claim (consumable capacity).
  if (p.vf_bandwidth_mbps && p.mode != PoolMode::kVf) {
    return invalidAt(key + ".vfBandwidthMbps", "applies only to mode \"vf\"");
  }
  if (p.claim_bandwidth_mbps && p.mode != PoolMode::kShared) {
    return invalidAt(key + ".claimBandwidthMbps", "applies only to mode \"shared\"");
  }
  // A shared pool's IDs are slots of a PF, which no CNI attaches on its own.
  if (!p.pod_info_dir.empty() && p.mode != PoolMode::kVf) {
    return invalidAt(key + ".podInfoDir", "applies only to mode \"vf\"");
  }
  return p;
}

}  // namespace

Result<PluginConfig> parseConfig(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number beyond double's range (1e999).
    return makeError(ErrorCode::kDecodeFailure, fmt::format("config is not JSON: {}", e.what()));
  }
  if (!doc.is_object()) return invalidAt("(top level)", "must be a JSON object");
  std::string prefix(kDefaultPrefix);
  if (auto it = doc.find("resourcePrefix"); it != doc.end()) {
    RDMANET_ASSIGN_OR_RETURN(prefix, asString(*it, "resourcePrefix"));
    if (!kube::isDnsSubdomain(prefix)) {
      return invalidAt("resourcePrefix", fmt::format("\"{}\" is not a DNS subdomain", prefix));
    }
  }
  PluginConfig cfg;
  for (const auto& [k, v] : doc.items()) {
    if (k == "resourcePrefix") continue;
    if (k == "periodicUpdateInterval") {
      // Accepted for compatibility (any integer); health is event-driven here.
      RDMANET_ASSIGN_OR_RETURN(int64_t ignored, asInt(v, k, INT64_MIN, INT64_MAX));
      (void)ignored;
      continue;
    }
    if (k == "rails") {
      RDMANET_ASSIGN_OR_RETURN(cfg.rails, parseRailRule(v, k));
      continue;
    }
    if (k != "resourceList" && k != "configList") return invalidAt(k, "unknown key");
    if (!v.is_array()) return invalidAt(k, "must be a list");
    for (size_t i = 0; i < v.size(); ++i) {
      RDMANET_ASSIGN_OR_RETURN(
          PoolConfig p, parsePool(v[i], fmt::format("{}[{}]", k, i), k == "configList", prefix));
      cfg.pools.push_back(std::move(p));
    }
  }
  // nlohmann orders object keys alphabetically: put resourceList pools before configList ones so
  // the claim order is the documented one regardless.
  std::stable_partition(cfg.pools.begin(), cfg.pools.end(),
                        [](const PoolConfig& p) { return p.key.starts_with("resourceList"); });
  if (cfg.pools.empty()) return invalidAt("resourceList", "no pools configured");
  RDMANET_RETURN_IF_ERROR(checkPools(cfg.pools));
  return cfg;
}

Result<PluginConfig> loadConfigFile(const std::filesystem::path& path) {
  // The config is a ConfigMap's file: a symlink into its "..data" directory.
  RDMANET_ASSIGN_OR_RETURN(auto text, readFile(path, kMaxConfigBytes, Symlink::kFollow));
  if (!text) {
    return errnoError(ErrorCode::kIoFailure, ENOENT, fmt::format("cannot read {}", path.string()));
  }
  auto r = parseConfig(*text);
  if (!r.ok()) return r.error().context(path.string());
  return r;
}

PluginConfig defaultConfig() {
  PluginConfig cfg;
  Selector rdma{.is_rdma = true};
  cfg.pools.push_back(PoolConfig{
      .resource_name = "vf", .mode = PoolMode::kVf, .selectors = {rdma}, .key = "default[0]"});
  cfg.pools.push_back(PoolConfig{.resource_name = "shared",
                                 .mode = PoolMode::kShared,
                                 .selectors = {rdma},
                                 .key = "default[1]"});
  return cfg;
}

}  // namespace rdmanet::dp
