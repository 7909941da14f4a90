#pragma once
// RDMA devices that follow their netdev into the pod (exclusive RDMA netns mode), and the
// device-info file (k8snetworkplumbingwg device-info-spec 1.1.0) that tells the pod what it got.

#include <optional>
#include <string>
#include <vector>

#include "cni/conf/result_types.h"
#include "cni/modes/lossless.h"
#include "cni/modes/mode.h"
#include "cni/modes/plugin_deps.h"
#include "cni/state/attachment_state.h"
#include "common/base/result.h"

namespace rdmanet::cni {

// The hardware RDMA devices of the attachment's PCI function (none for macvlan, none when the
// netconf says `rdma: false`).
std::vector<std::string> rdmaDevicesFor(const PluginDeps& deps, const NetConf& conf,
                                        const ResolvedDevice& dev);

// In exclusive mode, moves each device into the pod, recording it in st.rdma_moved as it goes.
// In shared mode nothing moves. A kernel without RDMA netlink leaves them in place (logged).
Status moveRdmaIntoPod(PluginDeps& deps, const std::vector<std::string>& devs, int pod_fd,
                       AttachmentState& st);
// Moves st.rdma_moved back to the host from inside the pod; nothing to do when the netns is
// gone (the kernel returns RDMA devices with their namespace's death).
Status returnRdmaToHost(PluginDeps& deps, const AttachmentState& st, const std::string& netns);
// CHECK: every device in st.rdma_moved is in the pod's namespace (100 otherwise) and, when the
// kernel names its port's netdev there, that netdev is the attachment's device (7 otherwise).
Status checkRdmaInPod(PluginDeps& deps, const AttachmentState& st, const std::string& netns);

struct DeviceInfoInput {
  const NetConf* conf = nullptr;
  const ResolvedDevice* dev = nullptr;
  std::vector<std::string> rdma{};
  const LosslessFinding* lossless = nullptr;  // nullptr when no lossless priority was asked
  const CniResult* result = nullptr;
};

// The device-info document: {"type": "pci", "version": "1.1.0", "pci": {...}} plus the rdmanet
// extension object (numa node, vlan, pcp, dscp, RoCE v2 GID index of the pod's IPv4 address).
nlohmann::json deviceInfoJson(const PluginDeps& deps, const DeviceInfoInput& in);

// The index of the RoCE v2 GID carrying `ipv4` (as ::ffff:a.b.c.d) on the device's first
// port; nullopt when absent (the table fills asynchronously after the address is added).
std::optional<int> roceV2GidIndex(const Sysfs& sysfs, const std::string& rdma_dev,
                                  const IpAddress& ipv4);

}  // namespace rdmanet::cni
