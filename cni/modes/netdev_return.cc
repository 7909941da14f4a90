#include "cni/modes/netdev_return.h"

#include <fmt/format.h>

#include "cni/modes/device_identity.h"
#include "cni/modes/mode.h"

namespace rdmanet::cni {
namespace {

bool isMissing(const Status& s) { return !s.ok() && s.error().code == ErrorCode::kDeviceNotFound; }

// In the pod: the proven device (device_identity.h), with the VLAN ADD made on it removed, down,
// renamed to its host name and moved out. Returns it as it was just before the move, or nullopt
// when it is not in the pod (never moved, already back, or not proven: then left alone).
Result<std::optional<LinkInfo>> inPod(Netlink& nl, const AttachmentState& st, int host_fd) {
  RDMANET_ASSIGN_OR_RETURN(auto dev, provenInPod(nl, st));
  if (!dev) return dev;
  if (!st.pod_lower.empty()) {
    auto vlan = nl.linkByName(st.ifname);
    if (vlan.ok() && vlan->kind == "vlan" && vlan->parent_ifindex == dev->ifindex) {
      Status s = nl.deleteLink(vlan->ifindex);
      if (!s.ok() && !isMissing(s)) return s.error();
    }
  }
  if (dev->admin_up) RDMANET_RETURN_IF_ERROR(nl.setUp(dev->ifindex, false));
  if (dev->name != st.host_ifname) {
    // Renaming in the pod avoids a clash with a host link named like the pod interface.
    const Status s = nl.rename(dev->ifindex, st.host_ifname);
    if (!s.ok()) return s.error().context("renaming back to " + st.host_ifname);
  }
  RDMANET_RETURN_IF_ERROR(nl.moveToNetns(dev->ifindex, host_fd));
  return dev;
}

}  // namespace

Status returnNetdevToHost(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  std::optional<LinkInfo> moved;
  if (!netns.empty()) {
    auto host = deps.runner.open(deps.host_netns_path);
    if (!host.ok()) return host.error().context("opening the host netns");
    const int host_fd = host->fd();
    RDMANET_ASSIGN_OR_RETURN(bool in_pod, runInPodIfExists(deps, netns, [&](Netlink& nl) {
                               auto r = inPod(nl, st, host_fd);
                               if (!r.ok()) return Status(r.error());
                               moved = std::move(r).value();
                               return okStatus();
                             }));
    (void)in_pod;
  }
  RDMANET_ASSIGN_OR_RETURN(auto dev, provenInHost(deps, st, moved));
  if (!dev) {
    // Whatever the host has under the pod-side or the old name is not proven ours: a NIC of
    // that name, a link a pod renamed, a new device. Nothing is renamed or changed.
    deps.log.warn("{} ({}) is not proven in the pod or the host; leaving every link alone",
                  st.host_ifname, st.pci.empty() ? std::string("no PCI address") : st.pci);
    return okStatus();
  }
  const int idx = dev->ifindex;
  if (dev->name != st.host_ifname) {
    if (dev->admin_up) RDMANET_RETURN_IF_ERROR(deps.host.setUp(idx, false));
    const Status s = deps.host.rename(idx, st.host_ifname);
    if (!s.ok()) return s.error().context("renaming " + dev->name + " back to " + st.host_ifname);
    dev->admin_up = false;
  }
  if (st.orig_mtu != 0 && dev->mtu != st.orig_mtu) {
    RDMANET_RETURN_IF_ERROR(deps.host.setMtu(idx, st.orig_mtu));
  }
  if (!st.orig_mac.isZero() && dev->mac != st.orig_mac) {
    const Status s = deps.host.setMac(idx, st.orig_mac);
    // A VF whose PF pins its MAC may refuse; the admin MAC was already restored via the PF.
    if (!s.ok()) deps.log.warn("restoring MAC of {}: {}", st.host_ifname, s.error().msg);
  }
  if (dev->admin_up != st.orig_up) RDMANET_RETURN_IF_ERROR(deps.host.setUp(idx, st.orig_up));
  return okStatus();
}

}  // namespace rdmanet::cni
