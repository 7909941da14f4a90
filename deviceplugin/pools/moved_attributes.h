#pragma once
// Pool membership that survives a device going into a pod.
//
// When the CNI moves a VF's (or a whole NIC's) netdev into a pod, the host's sysfs stops
// listing it under the function (net/ is namespace-tagged), and its RDMA device goes too: in
// exclusive RDMA netns mode it follows the netdev into the pod (the infiniband class is
// namespace-tagged as well), and a software device such as rxe is deleted with its netdev's
// move. Selectors that look at those (isRdma, ifNames, linkTypes) would then drop a device that
// is in use, and kubelet would see its capacity shrink under a running pod.
//
// MovedAttributes remembers each function's netdevs and RDMA devices while they are visible.
// While a function shows no netdev but is still bound to the same driver (or to none), selectors
// see it with what it had. Only selection uses this view: pool devices are still built from what
// sysfs shows (no netdev: health is judged by the PF and nothing stale is handed out). A function
// whose netdev is back in the host is seen as it is: an rxe that died with the move stays gone.
// A function that loses its driver (unbound) keeps its place too, so it stays in its pool as
// Unhealthy (health.h) rather than shrinking kubelet's capacity; one that disappears or is
// rebound to another driver (vfio-pci) is forgotten.

#include <map>
#include <string>
#include <vector>

#include "common/inventory/node.h"

namespace rdmanet::dp {

class MovedAttributes {
 public:
  // Call after every inventory scan.
  void observe(const NodeInventory& inv);
  // `fn` as selectors should see it (itself, or with its remembered netdevs and RDMA devices).
  const NicFunction& forSelection(const NicFunction& fn) const;
  size_t movedCount() const { return views_.size(); }

 private:
  struct Seen {
    std::string driver;
    std::vector<Netdev> netdevs;
    std::vector<RdmaDevice> rdma;
  };
  std::map<PciAddress, Seen> seen_;
  std::map<PciAddress, NicFunction> views_;
};

}  // namespace rdmanet::dp
