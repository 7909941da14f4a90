#include "deviceplugin/dra/apiserver/node_rails.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "deviceplugin/dra/apiserver/api_paths.h"

namespace rdmanet::dp {

using nlohmann::json;

namespace {

constexpr int kConflict = 409;

// `obj[key]` as an object, made when absent or null.
json& objectAt(json& obj, const char* key) {
  json& v = obj[key];
  if (!v.is_object()) v = json::object();
  return v;
}

}  // namespace

RailSummary railSummary(const DeviceSnapshot& snap) {
  RailSummary out;
  for (const NodeDevice& d : snap.devices) {
    const PoolDevice& p = d.device;
    const std::string& port = p.pf ? p.pf_netdev : p.netdev;
    if (!p.rail.empty() && !port.empty()) out[p.rail].insert(port);
  }
  return out;
}

bool applyRailSummary(json& node, const RailSummary& rails) {
  json& meta = objectAt(node, "metadata");
  json& labels = objectAt(meta, "labels");
  json& annotations = objectAt(meta, "annotations");
  json want_labels = json::object();
  for (const auto& [rail, ports] : rails) {
    want_labels[std::string(kRailLabelPrefix) + rail] = std::to_string(ports.size());
  }
  bool changed = false;
  for (auto it = labels.begin(); it != labels.end();) {
    if (it.key().starts_with(kRailLabelPrefix) && !want_labels.contains(it.key())) {
      it = labels.erase(it);
      changed = true;
    } else {
      ++it;
    }
  }
  for (const auto& [k, v] : want_labels.items()) {
    if (!labels.contains(k) || labels[k] != v) {
      labels[k] = v;
      changed = true;
    }
  }
  const std::string key(kRailsAnnotation);
  if (rails.empty()) {
    changed |= annotations.erase(key) > 0;
  } else {
    json summary = json::object();
    for (const auto& [rail, ports] : rails) summary[rail] = ports;
    const std::string text = summary.dump();
    if (!annotations.contains(key) || annotations[key] != text) {
      annotations[key] = text;
      changed = true;
    }
  }
  return changed;
}

Status writeNodeRails(kube::KubeClient& client, const std::string& node_name,
                      const RailSummary& rails, int attempts) {
  RDMANET_ASSIGN_OR_RETURN(const std::string path, dra::nodePath(node_name));
  for (int i = 1;; ++i) {
    RDMANET_ASSIGN_OR_RETURN(json node, client.get(path));
    if (!applyRailSummary(node, rails)) return okStatus();
    auto r = client.update(path, node);
    if (r.ok()) return okStatus();
    if (r.error().http_status != kConflict || i >= attempts) {
      return r.error().context(fmt::format("writing node {}'s rails", node_name));
    }
  }
}

}  // namespace rdmanet::dp
