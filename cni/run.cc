// runCni(): one invocation, from environment and stdin to stdout and exit code.
#include <fmt/format.h>

#include "cni/conf/json_util.h"
#include "cni/conf/version.h"
#include "cni/modes/claim_report.h"
#include "cni/modes/claimed_device.h"
#include "cni/modes/device_owner.h"
#include "cni/plugin.h"
#include "common/os/confined_path.h"

namespace rdmanet::cni {
namespace {

// The version to speak in an error: the config's when it is one we know.
std::string versionFor(std::string_view stdin_data) {
  auto doc = parseJson(stdin_data);
  if (doc.ok() && doc->is_object() && (*doc)["cniVersion"].is_string()) {
    std::string v = (*doc)["cniVersion"].get<std::string>();
    if (checkSupported(v).ok()) return v;
  }
  return std::string(kLatestVersion);
}

Invocation failure(const Error& e, const std::string& version) {
  return {1, dumpJson(errorToJson(e, version)) + "\n"};
}

// The paths a network names, beneath the node's roots for them (node_config.h). ADD and CHECK
// refuse one outside with error 7; DEL and GC, which must finish, ignore it (what ADD recorded
// was checked then, and removing is confined again).
Status confinePaths(NetConf& conf, Command command, const NodeConfig& node, Logger& log) {
  const bool acts = command == Command::kAdd || command == Command::kCheck;
  struct Named {
    std::string& path;
    const std::string& root;
    const char* key;
  };
  for (const Named& n :
       {Named{conf.device_info_file, node.devinfo_root, "runtimeConfig.CNIDeviceInfoFile"},
        Named{conf.pod_info_dir, node.pod_info_root, "podInfoDir"},
        Named{conf.dra_devices_dir, node.dra_devices_root, "draDevicesDir"}}) {
    if (n.path.empty() || isBeneath(n.root, n.path)) continue;
    if (acts) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("\"{}\" {} is not beneath {}", n.key, n.path, n.root));
    }
    log.warn("ignoring \"{}\" {}: not beneath {}", n.key, n.path, n.root);
    n.path.clear();
  }
  return okStatus();
}

Invocation dispatch(PluginDeps& deps, const CniEnv& env, const NetConf& conf) {
  Plugin plugin(deps);
  Status s;
  switch (env.command) {
    case Command::kAdd: {
      auto r = plugin.add(env, conf);
      reportAdd(env, conf, deps.node.dra_devices_root, r,
                deps.log);  // for the DRA claim's status (claim_report.h)
      if (!r.ok()) return failure(r.error(), conf.cni_version);
      return {0, dumpJson(resultToJson(*r, conf.cni_version)) + "\n"};
    }
    case Command::kDel: {
      // The device, known only from the state DEL removes.
      std::optional<PciAddress> pci;
      if (auto st = deps.store.load(env.container_id, env.ifname); st.ok() && *st) {
        if (auto p = PciAddress::parse((*st)->pci); p.ok()) pci = *p;
      }
      s = plugin.del(env, conf);
      if (s.ok() && pci) withdrawReport(env, conf, deps.node.dra_devices_root, *pci, deps.log);
      break;
    }
    case Command::kCheck:
      s = plugin.check(env, conf);
      break;
    case Command::kGc:
      s = plugin.gc(env, conf);
      break;
    case Command::kStatus:
      s = plugin.status(env, conf);
      break;
    case Command::kVersion:
      break;
  }
  if (!s.ok()) return failure(s.error(), conf.cni_version);
  return {0, ""};
}

}  // namespace

Invocation runCni(PluginDeps& deps, const EnvLookup& lookup, std::string_view stdin_data) {
  try {
    const std::string version = versionFor(stdin_data);
    auto env = parseEnv(lookup);
    if (!env.ok()) return failure(env.error(), version);
    if (env->command == Command::kVersion) {
      json out = {{"cniVersion", version}, {"supportedVersions", supportedVersions()}};
      return {0, dumpJson(out) + "\n"};
    }
    auto conf = parseNetConf(stdin_data, env->command, env->args);
    if (!conf.ok()) return failure(conf.error(), version);
    deps.log.setContext(env->container_id, env->netns, env->ifname);
    if (!conf->log_level.empty()) deps.log.setLevel(parseLogLevel(conf->log_level));
    if (!conf->log_file.empty()) {
      const Status file =
          deps.log.setFile(deps.node.log_root, conf->log_file, deps.node.log_max_bytes);
      if (!file.ok()) deps.log.warn("logFile not used, logging to stderr: {}", file.error().msg);
    }
    Status filled = confinePaths(*conf, env->command, deps.node, deps.log);
    // Without a deviceID from Multus, the device of the pod's DRA claim (claimed_device.h).
    const bool claimed = !conf->device_id;
    if (filled.ok()) {
      filled = fillClaimedDevice(*conf, *env, deps.store, deps.node.dra_devices_root);
    }
    if (filled.ok() && claimed && conf->device_id) {
      deps.log.info("deviceID {} from the pod's DRA claim records", conf->device_id->str());
    }
    const bool acts = env->command == Command::kAdd || env->command == Command::kCheck;
    if (filled.ok() && acts && conf->pod_device_id) {
      filled = checkPodOwnsDevice(
          *conf->pod_device_id, "runtimeConfig.deviceID", env->args,
          {.kubelet_checkpoint = deps.node.kubelet_checkpoint,
           .dra_devices = {.root = deps.node.dra_devices_root, .dir = conf->dra_devices_dir}});
    }
    Invocation out =
        filled.ok() ? dispatch(deps, *env, *conf) : failure(filled.error(), conf->cni_version);
    if (out.exit_code != 0) {
      deps.log.error("{} failed: {}", commandName(env->command), out.stdout_data);
    }
    return out;
  } catch (const std::exception& e) {
    return failure(makeError(ErrorCode::kInternal, "unexpected error", e.what()),
                   std::string(kLatestVersion));
  }
}

}  // namespace rdmanet::cni
