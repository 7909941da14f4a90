#pragma once
// Attach modes: how CNI_IFNAME comes to exist in the pod (one implementation per file:
// mode_sriov.cc, mode_macvlan.cc, mode_host_device.cc).
//
// The plugin drives every mode the same way:
//   prepare()  finds the device and records in the state what DEL must restore; changes nothing
//   attach()   makes the link: in the pod, named CNI_IFNAME, with MTU and MAC, left down; every
//              change pushes its undo step onto the rollback
//   detach()   restores from the state alone (DEL, GC and rollback of a half-done ADD); it is
//              idempotent and succeeds when the netns or the link is already gone
//   check()    compares the live mode-specific state (VF knobs on the PF, ...) with the config

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cni/conf/env.h"
#include "cni/conf/netconf.h"
#include "cni/modes/plugin_deps.h"
#include "cni/modes/rollback.h"
#include "cni/state/attachment_state.h"
#include "common/base/pci_address.h"
#include "common/net/netns.h"

namespace rdmanet::cni {

// The device a netconf names, resolved against the node.
struct ResolvedDevice {
  Mode mode = Mode::kMacvlan;
  std::optional<PciAddress> pci{};  // sriov VF / host-device function / macvlan master's function
  std::string netdev{};             // VF netdev / host-device netdev / macvlan master
  std::optional<PciAddress> pf{};   // sriov: the VF's PF
  std::string pf_netdev{};          // sriov: the PF's netdev (the DCB port and the VF knobs' owner)
  int vf_index = -1;
  int numa_node = -1;
  // The port whose DCB state decides lossless-ness: the PF (sriov), the master (macvlan), the
  // device itself (host-device).
  std::string dcbPort() const { return mode == Mode::kSriov ? pf_netdev : netdev; }
};

// Infers the mode when the netconf does not say (issue 4 rules), finds the netdevs and checks
// that mode and device agree (error 7 on a mismatch, 100 when something is missing).
Result<ResolvedDevice> resolveDevice(const NetConf& conf, PluginDeps& deps);

struct AttachContext {
  PluginDeps& deps;
  const CniEnv& env;
  const NetConf& conf;
  const ResolvedDevice& dev;
  int pod_fd = -1;   // the pod's namespace
  int host_fd = -1;  // ours
  // sriov: the share of its port the pod's DRA claim holds, the VF's rate cap (vf_rate.h).
  std::optional<uint32_t> claim_share_mbps{};
};

class Attacher {
 public:
  virtual ~Attacher() = default;
  virtual Status prepare(const AttachContext& ctx, AttachmentState& st) = 0;
  virtual Status attach(const AttachContext& ctx, AttachmentState& st, Rollback& rb) = 0;
  virtual Status check(const AttachContext& ctx, const AttachmentState& st) = 0;
};

// DEL for one recorded attachment. `netns` is the pod path (may be empty or gone).
Status detachSriov(PluginDeps& deps, const AttachmentState& st, const std::string& netns);
Status detachMacvlan(PluginDeps& deps, const AttachmentState& st, const std::string& netns);
Status detachHostDevice(PluginDeps& deps, const AttachmentState& st, const std::string& netns);
Status detach(PluginDeps& deps, const AttachmentState& st, const std::string& netns);

std::unique_ptr<Attacher> makeSriovAttacher();
std::unique_ptr<Attacher> makeMacvlanAttacher();
std::unique_ptr<Attacher> makeHostDeviceAttacher();
std::unique_ptr<Attacher> makeAttacher(Mode mode);

// Runs fn in the pod namespace when it still exists; Ok(false) when it is gone (error 3), so
// DEL can fall back to host-side cleanup.
Result<bool> runInPodIfExists(PluginDeps& deps, const std::string& netns,
                              const NetnsRunner::Fn& fn);

}  // namespace rdmanet::cni
