#include "cni/modes/netdev_return.h"

#include <fmt/format.h>

#include "cni/modes/mode.h"
#include "common/base/pci_address.h"
#include "common/inventory/netdev.h"

namespace rdmanet::cni {
namespace {

// A moved device is physical (a VF, a NIC) or, in tests and on the simulated node, a veth; the
// links rdmanet itself creates on top of it are never it.
bool couldBeTheDevice(const LinkInfo& l) { return l.kind != "vlan" && l.kind != "macvlan"; }

bool isMissing(const Status& s) { return !s.ok() && s.error().code == ErrorCode::kDeviceNotFound; }

Status inPod(Netlink& nl, const AttachmentState& st, int host_fd) {
  if (!st.pod_lower.empty()) {
    auto vlan = nl.linkByName(st.ifname);
    if (vlan.ok() && vlan->kind == "vlan") {
      Status s = nl.deleteLink(vlan->ifindex);
      if (!s.ok() && !isMissing(s)) return s;
    }
  }
  Result<LinkInfo> dev = nl.linkByName(st.ifname);
  if (!dev.ok() || !couldBeTheDevice(*dev))
    dev = nl.linkByName(st.pod_lower.empty() ? st.host_ifname : st.pod_lower);
  if (!dev.ok() && !st.pod_lower.empty()) dev = nl.linkByName(st.host_ifname);
  if (!dev.ok()) return okStatus();  // not in the pod: never moved, or already back
  if (dev->admin_up) RDMANET_RETURN_IF_ERROR(nl.setUp(dev->ifindex, false));
  if (dev->name != st.host_ifname) {
    // Renaming in the pod avoids a clash with a host link named like the pod interface.
    const Status s = nl.rename(dev->ifindex, st.host_ifname);
    if (!s.ok()) return s.error().context("renaming back to " + st.host_ifname);
  }
  return nl.moveToNetns(dev->ifindex, host_fd);
}

Result<LinkInfo> findInHost(PluginDeps& deps, const AttachmentState& st) {
  for (const std::string& name : {st.host_ifname, st.ifname, st.pod_lower}) {
    if (name.empty()) continue;
    auto l = deps.host.linkByName(name);
    if (l.ok() && couldBeTheDevice(*l)) return l;
  }
  if (!st.pci.empty()) {
    if (auto pci = PciAddress::parse(st.pci); pci.ok()) {
      for (const auto& name : netdevNamesOf(deps.sysfs, *pci)) {
        auto l = deps.host.linkByName(name);
        if (l.ok()) return l;
      }
    }
  }
  if (st.host_ifindex > 0) {
    auto l = deps.host.linkByIndex(st.host_ifindex);
    if (l.ok() && couldBeTheDevice(*l) && (l->mac == st.orig_mac || l->name.rfind("dev", 0) == 0)) {
      return l;
    }
  }
  return makeError(ErrorCode::kDeviceNotFound, st.host_ifname + " not found in the host");
}

}  // namespace

Status returnNetdevToHost(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  if (!netns.empty()) {
    auto host = deps.runner.open(deps.host_netns_path);
    if (!host.ok()) return host.error().context("opening the host netns");
    const int host_fd = host->fd();
    RDMANET_ASSIGN_OR_RETURN(bool in_pod, runInPodIfExists(deps, netns, [&](Netlink& nl) {
                               return inPod(nl, st, host_fd);
                             }));
    (void)in_pod;
  }
  auto dev = findInHost(deps, st);
  if (!dev.ok()) {
    deps.log.warn("{} is neither in the pod nor in the host; nothing to restore", st.host_ifname);
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
