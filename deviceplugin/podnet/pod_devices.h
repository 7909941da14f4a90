#pragma once
// The device -> pod map: each attachment with the RDMA device it uses and the physical port
// behind it, resolved against the host's sysfs.
//
//   sriov        the VF's RDMA device (under the VF's PCI function, or moved into the pod in
//                exclusive RDMA netns mode); the port is the PF's
//   host-device  the moved function's RDMA device; the port is that netdev, now in the pod
//   macvlan      the master's RDMA device, which every pod on that master shares (its counters
//                are the port's, not the pod's); the port is the master
//
// In every mode, a Soft-RoCE device (rxe) on an upper of the pod's own interface is the pod's,
// and takes the place of the above (not of a device moved into the pod): it carries only that
// pod's RDMA traffic. On kernels whose rdma_rxe sends from the initial netns only (Debian 12's
// 6.1), that is how a pod gets Soft-RoCE: an ipvlan or macvlan slave of its interface, moved to
// the host's netns, carries the rxe (hack/vm/roce_pods.sh). The host's sysfs shows such a slave
// with no lower_* link (its lower is in another netns) and an iflink, the lower's ifindex, other
// than its own ifindex; the pod is the attachment whose interface has that ifindex in its netns
// (recorded by the CNI's ADD). Ifindexes are per netns, so when two attachments record the same
// one, the slave's lower cannot be told apart by sysfs and neither pod gets it.

#include <string>
#include <vector>

#include "common/base/sysfs.h"
#include "deviceplugin/podnet/pod_attachments.h"

namespace rdmanet::podnet {

struct PodDevice {
  PodAttachment att{};
  std::string rdma_device{};       // "" when the device has none (or it was not found)
  bool rdma_in_pod_netns = false;  // read through the pod's netns (exclusive RDMA netns mode)
  std::string port_netdev{};       // the physical port's host netdev name (the label)
  std::string port_pci{};
  std::string port_ifname_in_pod{};  // host-device: the port's name inside the pod, else ""
};

// One entry per attachment, in the attachments' order. Reads only the host's sysfs.
std::vector<PodDevice> resolvePodDevices(const Sysfs& sysfs,
                                         const std::vector<PodAttachment>& attachments);

}  // namespace rdmanet::podnet
