#pragma once
// The CNI's attachments, as the node daemon reads them: who (pod namespace, name, UID) has what
// (mode, PCI function, RDMA devices moved into the pod) in which network namespace.
//
// The source is what rdmanet itself wrote: the CNI's state directory (cni/state/state_store.h), one
// JSON file per attachment, saved before ADD changes anything and removed by DEL. So the map
// survives a daemon restart (the files stay), and a deleted pod is gone from the next read (its
// DEL removed the file). The file format belongs to cni/state/attachment_state.cc; the daemon reads
// only the keys below and ignores the rest (tests/deviceplugin/podnet writes the files with the
// CNI's own StateStore, so a renamed key fails there).

#include <filesystem>
#include <string>
#include <vector>

namespace rdmanet::podnet {

struct PodAttachment {
  std::string container_id{};
  std::string ifname{};  // inside the pod
  std::string netns{};   // the pod's netns path
  std::string pod_namespace{};
  std::string pod_name{};
  std::string pod_uid{};
  std::string mode{};         // "sriov", "macvlan" or "host-device"
  std::string pci{};          // the function moved into the pod (sriov VF, host-device); "" if none
  std::string host_netdev{};  // sriov/host-device: the netdev's host name; macvlan: the master
  std::string pod_lower{};    // host-device with a VLAN: the moved netdev's name in the pod
  std::string pf_name{};      // sriov: the PF's netdev
  std::string pf_pci{};
  int vf_index = -1;
  std::vector<std::string> rdma_in_pod{};  // RDMA devices moved into the pod's netns
  int priority = 0;                        // the PCP its frames carry
  int pod_ifindex = 0;  // the interface's ifindex in the pod's netns; 0 if not recorded

  std::string podRef() const { return pod_namespace + "/" + pod_name; }
};

// The complete attachments under `state_dir` (an ADD still in progress is skipped: its device is
// not the pod's yet), sorted by pod, then interface. Unreadable or foreign files are skipped.
std::vector<PodAttachment> readPodAttachments(const std::filesystem::path& state_dir);

}  // namespace rdmanet::podnet
