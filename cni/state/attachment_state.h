#pragma once
// AttachmentState: everything DEL, CHECK and GC need about one attachment, recorded by ADD
// before it changes anything (so a crash mid-ADD can still be cleaned up by DEL).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cni/conf/env.h"
#include "cni/conf/netconf.h"
#include "common/base/result.h"
#include "common/net/netlink.h"

namespace rdmanet::cni {

// clang-tidy 14's bugprone-exception-escape blames an implicit special member here, yet every
// member moves without throwing (strings, vectors, optionals of trivial structs, nlohmann::json)
// and a struct of those member types alone is not flagged: a false positive.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct AttachmentState {
  std::string container_id;
  std::string ifname;
  std::string netns;
  std::string network;  // netconf "name"
  // Whose attachment this is (CNI_ARGS K8S_POD_*; empty outside Kubernetes): the daemon's
  // device -> pod map (deviceplugin/podnet) labels the device's counters with them.
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  int priority = 0;  // the PCP the pod's frames carry (NetConf::pcp), for the PFC series
  std::string cni_version;
  Mode mode = Mode::kMacvlan;
  bool complete = false;  // false while ADD is in progress

  // The host-side device and what it looked like before ADD.
  std::string host_ifname;  // sriov/host-device: original name; macvlan: the master
  int host_ifindex = 0;
  std::string pci;  // the function moved (sriov VF / host-device), empty if none
  MacAddress orig_mac;
  uint32_t orig_mtu = 0;
  bool orig_up = false;

  // sriov: the PF and the VF's original configuration, and which knobs ADD changed.
  std::string pf_name;
  std::string pf_pci;
  int vf_index = -1;
  std::optional<VfInfo> orig_vf;
  std::vector<std::string>
      vf_knobs_set;  // "mac", "vlan", "spoofchk", "trust", "link_state", "rate"

  // macvlan/host-device with a VLAN: the shared host VLAN device / the VLAN inside the pod.
  std::string vlan_link;  // macvlan: "<master>.<vlan>" in the host; empty without VLAN
  std::string pod_lower;  // host-device with VLAN: the moved device's name in the pod

  std::vector<std::string> rdma_moved;  // RDMA devices moved into the pod
  // The pod's interface's ifindex inside the pod's netns, once configured (0 before, and in
  // files of older CNIs): a Soft-RoCE device on an upper of it (an ipvlan or macvlan slave moved
  // to the host's netns) names it as its iflink, which is how the daemon finds the pod's own
  // RDMA device (deviceplugin/podnet/pod_devices.h).
  int pod_ifindex = 0;
  std::string device_info_file;
  std::string pod_info_dir;  // the device's own directory under the netconf's podInfoDir

  // The moved device as the kernel identifies it, whatever it is named (cni/modes/
  // device_identity.h): what DEL proves before it touches a link. Files of older CNIs have none
  // (has_identity false); DEL then proves what their PCI address allows, and no more.
  bool has_identity = false;
  std::string dev_parent;   // IFLA_PARENT_DEV_NAME ("" for a virtual device)
  MacAddress dev_perm_mac;  // IFLA_PERM_ADDRESS (zero when the driver sets none)
  std::string dev_kind;     // IFLA_INFO_KIND ("" for a physical device)
  int dev_pod_ifindex = 0;  // its ifindex in the pod once moved
  // /proc/sys/kernel/random/boot_id at ADD ("" in older files): a DEL from an earlier boot
  // never touches the device (cni/state/ownership.h).
  std::string boot_id;
  int64_t added_ns = 0;  // monotonic time of the ADD (PluginDeps::clock): orders two in a boot

  nlohmann::json ipam;  // the ipam section used for ADD (DEL/GC release with it)
  std::string ipam_type;
  std::string ipam_version;  // the cniVersion the delegate was called with
  nlohmann::json raw_conf;   // the netconf of ADD, without prevResult
  nlohmann::json result;     // the ADD result (1.1.0 form)

  nlohmann::json toJson() const;
  static Result<AttachmentState> fromJson(const nlohmann::json& j);
  // The invocation's part (ids, netconf, IPAM, device-info path); the rest is the mode's.
  static AttachmentState forInvocation(const CniEnv& env, const NetConf& conf);
};

}  // namespace rdmanet::cni
