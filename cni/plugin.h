#pragma once
// The CNI plugin: one method per verb over injected dependencies (modes/plugin_deps.h), and
// runCni(), which turns one invocation (environment + stdin) into stdout + exit code.
//
// ADD resolves the device, takes its lock, checks the lossless priority, records the state,
// then attaches (mode.h), moves RDMA devices, delegates IPAM, configures the pod and writes the
// device-info file; any failure undoes every earlier step. DEL, GC and ADD's rollback restore
// from the recorded state alone.

#include <string>
#include <string_view>

#include "cni/conf/env.h"
#include "cni/conf/netconf.h"
#include "cni/conf/result_types.h"
#include "cni/modes/plugin_deps.h"
#include "cni/state/attachment_state.h"
#include "common/base/result.h"

namespace rdmanet::cni {

class Plugin {
 public:
  explicit Plugin(PluginDeps& deps) : deps_(deps) {}

  Result<CniResult> add(const CniEnv& env, const NetConf& conf);
  Status del(const CniEnv& env, const NetConf& conf);
  Status check(const CniEnv& env, const NetConf& conf);
  Status gc(const CniEnv& env, const NetConf& conf);
  Status status(const CniEnv& env, const NetConf& conf);

 private:
  // DEL of one recorded attachment: RDMA back, mode detach, IPAM release, device-info and state
  // removal. Stops at the first failure and keeps the state, so a retried DEL resumes.
  Status release(const CniEnv& env, const AttachmentState& st, const std::string& netns,
                 const NetConf* conf);
  // GC of a state file that does not parse (named "<containerid>_<ifname>").
  Status releaseTorn(const CniEnv& env, const NetConf& conf, const std::string& name);
  Status ipamCall(const CniEnv& env, const std::string& command, const nlohmann::json& raw,
                  const std::string& type, const std::string& version);

  PluginDeps& deps_;
};

struct Invocation {
  int exit_code = 0;
  std::string stdout_data;
};

// Parses the environment and stdin, runs the verb and renders the result or the error JSON
// (spec codes; exit code 1 on error). Never throws.
Invocation runCni(PluginDeps& deps, const EnvLookup& env, std::string_view stdin_data);

// The device-lock name guarding one device ("" for none: a macvlan needs only its VLAN lock).
std::string deviceLockKey(Mode mode, const std::string& pci, const std::string& netdev);

}  // namespace rdmanet::cni
