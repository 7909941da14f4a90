#include "deviceplugin/doctor/preflight/plan.h"

#include <algorithm>
#include <set>

#include "common/json/json_access.h"
#include "common/kube/quantity.h"
#include "common/kube/resource_slice.h"

namespace rdmanet::doctor::preflight {

using json = nlohmann::json;

Result<std::vector<std::string>> nodesWithResource(const json& node_list,
                                                   const std::string& resource) {
  RDMANET_ASSIGN_OR_RETURN(const json* items, optArray(node_list, "items"));
  if (items == nullptr) return jsonTypeError("items", "an array of Nodes");
  std::vector<std::string> out;
  for (const auto& n : *items) {
    const json* meta = jsonMember(n, "metadata");
    const json* name = meta != nullptr ? jsonMember(*meta, "name") : nullptr;
    const json* status = jsonMember(n, "status");
    const json* alloc = status != nullptr ? jsonMember(*status, "allocatable") : nullptr;
    const json* q = alloc != nullptr ? jsonMember(*alloc, resource) : nullptr;
    if (name == nullptr || !name->is_string() || q == nullptr || !q->is_string()) continue;
    auto v = kube::parseQuantity(q->get_ref<const std::string&>());
    if (v.ok() && *v > 0) out.push_back(name->get<std::string>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<std::string>> nodesWithSlices(const json& slice_list,
                                                 const std::string& driver) {
  RDMANET_ASSIGN_OR_RETURN(const kube::ResourceSliceList list,
                           kube::decodeResourceSliceList(slice_list));
  std::set<std::string> nodes;
  for (const auto& s : list.items) {
    if (s.driver == driver && !s.node_name.empty() && !s.device_names.empty()) {
      nodes.insert(s.node_name);
    }
  }
  return std::vector<std::string>(nodes.begin(), nodes.end());
}

std::vector<NodePair> planPairs(const std::vector<std::string>& nodes, PairMode mode) {
  std::vector<NodePair> out;
  const size_t n = nodes.size();
  if (n < 2) return out;
  if (mode == PairMode::kAll || (mode == PairMode::kAuto && n <= kAllPairsUpTo)) {
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i != j) out.push_back({.from = nodes[i], .to = nodes[j]});
      }
    }
    return out;
  }
  for (size_t i = 0; i < n; ++i) out.push_back({.from = nodes[i], .to = nodes[(i + 1) % n]});
  return out;
}

std::vector<std::string> serverNodes(const std::vector<std::string>& nodes,
                                     const std::vector<NodePair>& pairs) {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    if (std::any_of(pairs.begin(), pairs.end(), [&](const NodePair& p) { return p.to == n; })) {
      out.push_back(n);
    }
  }
  return out;
}

Result<std::optional<int>> nadMtu(const json& nad) {
  const json* spec = jsonMember(nad, "spec");
  RDMANET_ASSIGN_OR_RETURN(std::optional<std::string> text,
                           spec != nullptr ? optString(*spec, "config", "spec.config")
                                           : Result<std::optional<std::string>>(std::nullopt));
  if (!text) return jsonTypeError("spec.config", "a CNI config (a JSON string)");
  const json conf = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!conf.is_object()) return jsonTypeError("spec.config", "a CNI config (a JSON object)");
  RDMANET_ASSIGN_OR_RETURN(std::optional<int64_t> mtu, optInt(conf, "mtu", 68, 65535));
  if (mtu) return std::optional<int>(static_cast<int>(*mtu));
  RDMANET_ASSIGN_OR_RETURN(const json* plugins, optArray(conf, "plugins", "spec.config.plugins"));
  if (plugins == nullptr) return std::optional<int>();
  for (const auto& p : *plugins) {
    RDMANET_ASSIGN_OR_RETURN(mtu, optInt(p, "mtu", 68, 65535));
    if (mtu) return std::optional<int>(static_cast<int>(*mtu));
  }
  return std::optional<int>();
}

}  // namespace rdmanet::doctor::preflight
