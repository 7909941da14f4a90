// host-device mode: a whole netdev (by name, MAC or PCI address) moves into the pod and comes
// back under its original name on DEL. With `vlan`, CNI_IFNAME is a VLAN device inside the pod
// on top of the moved device, with the lossless egress map.
#include <fmt/format.h>

#include "cni/modes/device_identity.h"
#include "cni/modes/mode.h"
#include "cni/modes/netdev_return.h"
#include "cni/modes/shared_vlan.h"

namespace rdmanet::cni {
namespace {

class HostDeviceAttacher : public Attacher {
 public:
  Status prepare(const AttachContext& ctx, AttachmentState& st) override {
    auto l = ctx.deps.host.linkByName(ctx.dev.netdev);
    if (!l.ok()) return l.error().context("host device " + ctx.dev.netdev);
    if (l->kind == "macvlan" || l->kind == "vlan") {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("{} is a \"{}\" link; host-device moves whole devices", l->name, l->kind));
    }
    st.host_ifname = l->name;
    st.host_ifindex = l->ifindex;
    st.orig_mac = l->mac;
    st.orig_mtu = l->mtu;
    st.orig_up = l->admin_up;
    if (ctx.dev.pci) st.pci = ctx.dev.pci->str();
    if (ctx.conf.hasVlan()) st.pod_lower = l->name;
    recordIdentity(st, *l);
    return okStatus();
  }

  Status attach(const AttachContext& ctx, AttachmentState& st, Rollback& rb) override {
    PluginDeps& deps = ctx.deps;
    rb.push("return " + st.host_ifname + " to the host",
            [&deps, &st] { return returnNetdevToHost(deps, st, st.netns); });
    if (st.orig_up) RDMANET_RETURN_IF_ERROR(deps.host.setUp(st.host_ifindex, false));
    const Status moved = deps.host.moveToNetns(st.host_ifindex, ctx.pod_fd);
    if (!moved.ok()) return moved.error().context("moving " + st.host_ifname + " into the pod");
    const NetConf& c = ctx.conf;
    return deps.runner.run(ctx.env.netns, [&](Netlink& nl) -> Status {
      RDMANET_ASSIGN_OR_RETURN(LinkInfo l, nl.linkByName(st.host_ifname));
      st.dev_pod_ifindex = l.ifindex;
      if (!c.hasVlan()) {
        RDMANET_RETURN_IF_ERROR(nl.rename(l.ifindex, ctx.env.ifname));
        if (c.mtu) RDMANET_RETURN_IF_ERROR(nl.setMtu(l.ifindex, *c.mtu));
        if (c.mac) RDMANET_RETURN_IF_ERROR(nl.setMac(l.ifindex, *c.mac));
        return okStatus();
      }
      if (c.mtu && *c.mtu > l.mtu) RDMANET_RETURN_IF_ERROR(nl.setMtu(l.ifindex, *c.mtu));
      RDMANET_RETURN_IF_ERROR(nl.setUp(l.ifindex, true));  // a VLAN passes nothing on a down lower
      auto vlan = nl.addVlan(VlanSpec{.name = ctx.env.ifname,
                                      .link_ifindex = l.ifindex,
                                      .vlan_id = *c.vlan,
                                      .proto = c.vlan_proto,
                                      .egress_qos = egressMapTo(c.pcp()),
                                      .mtu = c.mtu.value_or(0),
                                      .netns_fd = -1});
      if (!vlan.ok()) return vlan.error().context("creating VLAN " + ctx.env.ifname);
      if (c.mac) RDMANET_RETURN_IF_ERROR(nl.setMac(*vlan, *c.mac));
      return okStatus();
    });
  }

  Status check(const AttachContext& ctx, const AttachmentState& st) override {
    return ctx.deps.runner.run(ctx.env.netns, [&](Netlink& nl) -> Status {
      RDMANET_ASSIGN_OR_RETURN(auto l, nl.linkByName(ctx.env.ifname));
      if (!st.pod_lower.empty()) {
        if (l.kind != "vlan") {
          return makeError(ErrorCode::kDeviceNotFound, ctx.env.ifname + " is not a VLAN device");
        }
        RDMANET_ASSIGN_OR_RETURN(auto lower, nl.linkByName(st.pod_lower));
        if (l.parent_ifindex != 0 && l.parent_ifindex != lower.ifindex) {
          return makeError(ErrorCode::kDeviceNotFound,
                           fmt::format("{} is not on {}", ctx.env.ifname, st.pod_lower));
        }
      }
      return okStatus();
    });
  }
};

}  // namespace

std::unique_ptr<Attacher> makeHostDeviceAttacher() {
  return std::make_unique<HostDeviceAttacher>();
}

Status detachHostDevice(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  return returnNetdevToHost(deps, st, netns);
}

}  // namespace rdmanet::cni
