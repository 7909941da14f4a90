// macvlan mode: a macvlan on the master (the RoCE PF netdev), created directly inside the pod.
// With `vlan`, it sits on the shared host VLAN device whose egress map puts every frame on the
// lossless PCP (shared_vlan.h).
// With a DRA claim's share of the PF (vf_rate.h: shareToEnforce), the macvlan's egress is shaped
// to it by a TBF root qdisc. That shapes what the kernel sends (TCP, UDP, every socket
// protocol); RDMA traffic the HCA sends itself (RoCE) never passes a qdisc and stays unshaped.
// The qdisc goes with the macvlan: DEL and rollback delete the link, and nothing else is left.
#include <fmt/format.h>

#include "cni/modes/mode.h"
#include "cni/modes/shared_vlan.h"

namespace rdmanet::cni {
namespace {

std::string userKey(const AttachmentState& st) { return st.container_id + "_" + st.ifname; }

class MacvlanAttacher : public Attacher {
 public:
  Status prepare(const AttachContext& ctx, AttachmentState& st) override {
    auto master = ctx.deps.host.linkByName(ctx.dev.netdev);
    if (!master.ok()) return master.error().context("macvlan master " + ctx.dev.netdev);
    st.host_ifname = master->name;
    st.host_ifindex = master->ifindex;
    if (ctx.conf.hasVlan()) st.vlan_link = sharedVlanName(master->name, *ctx.conf.vlan);
    return okStatus();
  }

  Status attach(const AttachContext& ctx, AttachmentState& st, Rollback& rb) override {
    int lower = st.host_ifindex;
    if (ctx.conf.hasVlan()) {
      rb.push("release " + st.vlan_link,
              [&ctx, &st] { return releaseSharedVlan(ctx.deps, st.vlan_link, userKey(st)); });
      RDMANET_ASSIGN_OR_RETURN(lower, acquireSharedVlan(ctx.deps, {.master = st.host_ifname,
                                                                   .vlan = *ctx.conf.vlan,
                                                                   .proto = ctx.conf.vlan_proto,
                                                                   .pcp = ctx.conf.pcp(),
                                                                   .user = userKey(st)}));
    }
    auto created = ctx.deps.host.addMacvlan(MacvlanSpec{.name = ctx.env.ifname,
                                                        .master_ifindex = lower,
                                                        .mode = ctx.conf.macvlan_mode,
                                                        .mtu = ctx.conf.mtu.value_or(0),
                                                        .mac = ctx.conf.mac,
                                                        .netns_fd = ctx.pod_fd});
    if (!created.ok()) {
      return created.error().context(
          fmt::format("creating macvlan {} on {}", ctx.env.ifname,
                      st.vlan_link.empty() ? st.host_ifname : st.vlan_link));
    }
    rb.push("delete macvlan " + ctx.env.ifname, [&ctx] {
      return ctx.deps.runner.run(ctx.env.netns, [&](Netlink& nl) -> Status {
        auto l = nl.linkByName(ctx.env.ifname);
        if (!l.ok()) return okStatus();
        return nl.deleteLink(l->ifindex);
      });
    });
    if (ctx.claim_share_mbps) RDMANET_RETURN_IF_ERROR(shape(ctx, *ctx.claim_share_mbps));
    return okStatus();
  }

  Status check(const AttachContext& ctx, const AttachmentState& st) override {
    auto master = ctx.deps.host.linkByName(st.host_ifname);
    if (!master.ok()) return master.error().context("macvlan master");
    if (!st.vlan_link.empty()) {
      auto v = ctx.deps.host.linkByName(st.vlan_link);
      if (!v.ok()) return v.error().context("host VLAN device " + st.vlan_link);
    }
    return ctx.deps.runner.run(ctx.env.netns, [&](Netlink& nl) -> Status {
      RDMANET_ASSIGN_OR_RETURN(auto l, nl.linkByName(ctx.env.ifname));
      if (l.kind != "macvlan") {
        return makeError(ErrorCode::kDeviceNotFound,
                         fmt::format("{} is a \"{}\" link, not a macvlan", l.name, l.kind));
      }
      if (!ctx.claim_share_mbps) return okStatus();
      RDMANET_ASSIGN_OR_RETURN(auto rate, nl.egressRate(l.ifindex));
      if (rate != uint64_t{*ctx.claim_share_mbps}) {
        return makeError(ErrorCode::kInvalidConfig,
                         fmt::format("macvlan {} drifted: egress {} (want {} Mbit/s, the pod's DRA "
                                     "claim's share)",
                                     l.name,
                                     rate ? fmt::format("shaped to {} Mbit/s", *rate)
                                          : std::string("not shaped"),
                                     *ctx.claim_share_mbps));
      }
      return okStatus();
    });
  }

 private:
  // The pod's macvlan egress held to the claim's share.
  static Status shape(const AttachContext& ctx, uint32_t mbps) {
    Status s = ctx.deps.runner.run(ctx.env.netns, [&](Netlink& nl) -> Status {
      RDMANET_ASSIGN_OR_RETURN(LinkInfo l, nl.linkByName(ctx.env.ifname));
      return nl.setEgressRate(l.ifindex, mbps);
    });
    if (!s.ok()) {
      return s.error().context(fmt::format(
          "shaping macvlan {} to the {} Mbit/s the pod's DRA claim holds", ctx.env.ifname, mbps));
    }
    ctx.deps.log.info(
        "the pod's {} egress is shaped to {} Mbit/s, the pod's DRA claim's share of {}; RDMA "
        "(RoCE) traffic from the HCA bypasses the qdisc and is not shaped",
        ctx.env.ifname, mbps, ctx.conf.device_id ? ctx.conf.device_id->str() : ctx.dev.netdev);
    return okStatus();
  }
};

}  // namespace

std::unique_ptr<Attacher> makeMacvlanAttacher() { return std::make_unique<MacvlanAttacher>(); }

Status detachMacvlan(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  // With the netns gone, the kernel already destroyed the macvlan.
  RDMANET_ASSIGN_OR_RETURN(bool in_pod, runInPodIfExists(deps, netns, [&](Netlink& nl) -> Status {
                             auto l = nl.linkByName(st.ifname);
                             if (!l.ok() || l->kind != "macvlan") return okStatus();
                             Status s = nl.deleteLink(l->ifindex);
                             if (!s.ok() && s.error().code != ErrorCode::kDeviceNotFound) return s;
                             return okStatus();
                           }));
  (void)in_pod;
  return releaseSharedVlan(deps, st.vlan_link, st.container_id + "_" + st.ifname);
}

}  // namespace rdmanet::cni
