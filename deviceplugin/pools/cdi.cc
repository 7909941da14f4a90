#include "deviceplugin/pools/cdi.h"

#include <fmt/format.h>

#include "common/json/json_dump.h"
#include "common/os/atomic_file.h"
#include "common/os/make_dirs.h"

namespace rdmanet::dp {

namespace {

using nlohmann::json;

json deviceNode(const DeviceNode& n) {
  json out = {{"path", n.container_path},
              {"hostPath", n.host_path},
              {"type", "c"},
              {"permissions", n.permissions}};
  if (n.major > 0) {
    out["major"] = n.major;
    out["minor"] = n.minor;
  }
  return out;
}

json containerEdits(const ContainerAllocation& a) {
  json env = json::array();
  for (const auto& [k, v] : a.envs) env.push_back(fmt::format("{}={}", k, v));
  json nodes = json::array();
  for (const DeviceNode& n : a.devices) nodes.push_back(deviceNode(n));
  json edits = {{"env", std::move(env)}, {"deviceNodes", std::move(nodes)}};
  for (const Mount& m : a.mounts) {
    json opts = json::array({"bind"});
    if (m.read_only) opts.push_back("ro");
    edits["mounts"].push_back(
        {{"hostPath", m.host_path}, {"containerPath", m.container_path}, {"options", opts}});
  }
  return edits;
}

}  // namespace

json encodeCdiSpec(std::string_view kind, const std::vector<CdiDevice>& devices) {
  json out = json::array();
  for (const CdiDevice& d : devices) {
    out.push_back({{"name", d.name}, {"containerEdits", containerEdits(d.edits)}});
  }
  return {{"cdiVersion", kCdiVersion}, {"kind", kind}, {"devices", std::move(out)}};
}

Status writeCdiSpecFile(const std::filesystem::path& file, std::string_view kind,
                        const std::vector<CdiDevice>& devices, const CdiWriteOptions& options) {
  // The CDI dir need not exist on a fresh node (the runtime only reads it).
  RDMANET_RETURN_IF_ERROR(makeDirs(file.parent_path(), 0700));
  return writeFileAtomic(file, dumpJson(encodeCdiSpec(kind, devices), 2) + "\n",
                         {.mode = 0600, .durable = options.durable});
}

}  // namespace rdmanet::dp
