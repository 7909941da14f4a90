#pragma once
// PluginDeps: every side effect the CNI plugin has, injected (CONTRIBUTING.md, "Seams").
//
// main.cc wires the real ones (LibnlNetlink in the host netns, SetnsRunner, ExecIpam, the state
// dir from RDMANET_STATE_DIR, the sysfs root from RDMANET_SYSFS_ROOT, the node config from the
// state dir); tests wire FakeNetlink, FakeNetnsRunner, a fake IPAM and temp dirs.

#include <chrono>
#include <string>
#include <vector>

#include "cni/conf/logger.h"
#include "cni/conf/node_config.h"
#include "cni/ipam/ipam.h"
#include "cni/state/state_store.h"
#include "common/base/clock.h"
#include "common/base/sysfs.h"
#include "common/net/netlink.h"
#include "common/net/netns.h"

namespace rdmanet::cni {

inline const SteadyClock kPluginSteadyClock{};

struct PluginDeps {
  Netlink& host;        // a netlink socket in the host (the plugin's own) namespace
  NetnsRunner& runner;  // runs work inside the pod's namespace
  IpamExecutor& ipam;
  Sysfs sysfs;
  StateStore store;
  Logger& log;
  std::chrono::milliseconds lock_timeout{3000};
  // The host namespace as a path the runner can open (for moving devices back on DEL).
  std::string host_netns_path = "/proc/self/ns/net";
  // Namespaces CNI_NETNS must not be (pod_netns.h): the plugin's own and init's.
  std::vector<std::string> host_netns_paths = {"/proc/self/ns/net", "/proc/1/ns/net"};
  // The node's settings (node_config.h): kubelet's checkpoint, the roots a network's paths must
  // stay beneath, the log cap. Never from the netconf.
  NodeConfig node{};
  // The kernel's boot id, recorded by ADD so that a DEL from an earlier boot leaves the device
  // alone (cni/state/ownership.h); RDMANET_BOOT_ID_FILE in tests.
  std::string boot_id_file = "/proc/sys/kernel/random/boot_id";
  // Monotonic time, which every process of one boot shares: the order of two ADDs of a device.
  const Clock& clock = kPluginSteadyClock;
};

}  // namespace rdmanet::cni
