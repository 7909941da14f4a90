#include "tests/deviceplugin/dra/kubelet/cdi_runtime.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rdmanet::dp::testing {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> containerCdiIds(
    const k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourceResponse& claim,
    const std::string& request) {
  std::vector<std::string> out;
  for (const auto& d : claim.devices()) {
    const auto& names = d.request_names();
    if (request.empty() || names.empty() ||
        std::find(names.begin(), names.end(), request) != names.end()) {
      out.insert(out.end(), d.cdi_device_ids().begin(), d.cdi_device_ids().end());
    }
  }
  return out;
}

ContainerView applyCdi(const fs::path& cdi_dir, const std::vector<std::string>& ids) {
  // "<kind>=<name>" -> containerEdits, over every spec file (as the runtime's cache loads them).
  std::map<std::string, json> devices;
  for (const auto& e : fs::directory_iterator(cdi_dir)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    json spec = json::parse(ss.str(), nullptr, false);
    if (!spec.is_object()) continue;
    for (const json& d : spec.value("devices", json::array())) {
      devices[spec["kind"].get<std::string>() + "=" + d["name"].get<std::string>()] =
          d["containerEdits"];
    }
  }
  ContainerView v;
  for (const std::string& id : ids) {
    auto it = devices.find(id);
    if (it == devices.end()) {
      v.unresolved.push_back(id);
      continue;
    }
    const json& edits = it->second;
    for (const json& e : edits.value("env", json::array())) {
      const std::string kv = e.get<std::string>();
      const size_t eq = kv.find('=');
      v.env[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    for (const json& n : edits.value("deviceNodes", json::array())) {
      v.device_nodes.insert(n.value("hostPath", n.value("path", "")));
    }
    for (const json& m : edits.value("mounts", json::array())) {
      v.mounts.insert(m["containerPath"].get<std::string>());
      const std::string source = m.value("hostPath", "");
      std::error_code ec;
      if (!fs::exists(source, ec)) v.missing_mount_sources.push_back(source);
    }
  }
  return v;
}

}  // namespace rdmanet::dp::testing
