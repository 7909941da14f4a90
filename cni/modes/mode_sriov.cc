// sriov mode: an SR-IOV VF's netdev moves into the pod; its VLAN (with the lossless priority as
// QoS, i.e. VST), MAC, spoofchk, trust, link state and rates are set through the PF first.
//
// DEL order, as drivers need it: restore the VF's settings through the PF while the VF netdev
// is still in the pod, then bring the netdev back. Several PF drivers refuse a netdev MAC change
// on an untrusted VF whose admin MAC is pinned, so the admin MAC is reset before the netdev's.
#include <fmt/format.h>

#include <algorithm>

#include "cni/modes/device_identity.h"
#include "cni/modes/mode.h"
#include "cni/modes/netdev_return.h"
#include "cni/modes/vf_rate.h"

namespace rdmanet::cni {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Error knobError(const Error& e, const std::string& pf, int vf, const std::string& knob) {
  Error out = e.context(fmt::format("setting {} of VF {} through PF {}", knob, vf, pf));
  if (e.sys_errno == EOPNOTSUPP) {
    out.details = fmt::format(
        "the driver of {} does not support the VF setting \"{}\"; remove it "
        "from the netconf",
        pf, knob);
  }
  return out;
}

VfRateAsks rateAsks(const AttachContext& ctx, const VfInfo& orig) {
  return {.nad_min = ctx.conf.min_tx_rate,
          .nad_max = ctx.conf.max_tx_rate,
          .claim_max = ctx.claim_share_mbps,
          .orig = {.min_mbps = orig.min_tx_rate, .max_mbps = orig.max_tx_rate}};
}

// Sets one VF knob and records it, so DEL and rollback restore exactly what was changed.
Status setKnob(AttachmentState& st, const std::string& knob, const std::function<Status()>& set) {
  const Status s = set();
  if (!s.ok()) return knobError(s.error(), st.pf_name, st.vf_index, knob);
  if (!has(st.vf_knobs_set, knob)) st.vf_knobs_set.push_back(knob);
  return okStatus();
}

class SriovAttacher : public Attacher {
 public:
  Status prepare(const AttachContext& ctx, AttachmentState& st) override {
    Netlink& host = ctx.deps.host;
    auto pf = host.linkByName(ctx.dev.pf_netdev);
    if (!pf.ok()) return pf.error().context("PF netdev " + ctx.dev.pf_netdev);
    auto vfs = host.vfs(pf->ifindex);
    if (!vfs.ok()) return vfs.error().context("reading the VFs of " + pf->name);
    auto it = std::find_if(vfs->begin(), vfs->end(),
                           [&](const VfInfo& v) { return v.index == ctx.dev.vf_index; });
    if (it == vfs->end()) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("PF {} does not report VF {}", pf->name, ctx.dev.vf_index));
    }
    auto vf = host.linkByName(ctx.dev.netdev);
    if (!vf.ok()) return vf.error().context("VF netdev " + ctx.dev.netdev);
    st.pf_name = pf->name;
    st.pf_pci = ctx.dev.pf ? ctx.dev.pf->str() : "";
    st.vf_index = ctx.dev.vf_index;
    st.orig_vf = *it;
    st.pci = ctx.dev.pci ? ctx.dev.pci->str() : "";
    st.host_ifname = vf->name;
    st.host_ifindex = vf->ifindex;
    st.orig_mac = vf->mac;
    st.orig_mtu = vf->mtu;
    st.orig_up = vf->admin_up;
    recordIdentity(st, *vf);
    return okStatus();
  }

  Status attach(const AttachContext& ctx, AttachmentState& st, Rollback& rb) override {
    PluginDeps& deps = ctx.deps;
    Netlink& host = deps.host;
    const NetConf& c = ctx.conf;
    // One undo for everything below, in DEL's driver order, driven by what st records.
    rb.push("restore VF " + st.pci, [&deps, &st] { return detachSriov(deps, st, st.netns); });

    const VfInfo& orig = *st.orig_vf;
    const int pf = host.linkByName(st.pf_name).valueOr(LinkInfo{}).ifindex;
    const int vf = st.vf_index;
    // Decided before the first change: a min rate the claim's share cannot hold refuses ADD.
    RDMANET_ASSIGN_OR_RETURN(const auto rate, vfRateFor(rateAsks(ctx, orig)));
    if (c.vlan || c.lossless) {
      const uint16_t vlan = c.vlan.value_or(orig.vlan);
      const uint8_t qos = vlan != 0 ? c.pcp() : 0;
      RDMANET_RETURN_IF_ERROR(setKnob(st, "vlan", [&] {
        return host.setVfVlan(pf, vf, vlan, qos, vlan != 0 ? c.vlan_proto : 0x8100);
      }));
    }
    if (c.mac) {
      RDMANET_RETURN_IF_ERROR(setKnob(st, "mac", [&] { return host.setVfMac(pf, vf, *c.mac); }));
    }
    if (rate) {
      if (ctx.claim_share_mbps) {
        deps.log.info("VF {} of {}: max_tx_rate {} Mbit/s (the pod's DRA claim holds {} Mbit/s)",
                      vf, st.pf_name, rate->max_mbps, *ctx.claim_share_mbps);
      }
      RDMANET_RETURN_IF_ERROR(setKnob(
          st, "rate", [&] { return host.setVfRate(pf, vf, rate->min_mbps, rate->max_mbps); }));
    }
    if (c.spoofchk) {
      RDMANET_RETURN_IF_ERROR(
          setKnob(st, "spoofchk", [&] { return host.setVfSpoofchk(pf, vf, *c.spoofchk); }));
    }
    if (c.trust) {
      RDMANET_RETURN_IF_ERROR(
          setKnob(st, "trust", [&] { return host.setVfTrust(pf, vf, *c.trust); }));
    }
    if (c.link_state) {
      RDMANET_RETURN_IF_ERROR(
          setKnob(st, "link_state", [&] { return host.setVfLinkState(pf, vf, *c.link_state); }));
    }

    if (st.orig_up) RDMANET_RETURN_IF_ERROR(host.setUp(st.host_ifindex, false));
    const Status moved = host.moveToNetns(st.host_ifindex, ctx.pod_fd);
    if (!moved.ok()) return moved.error().context("moving VF " + st.host_ifname + " into the pod");
    return deps.runner.run(ctx.env.netns, [&](Netlink& nl) -> Status {
      RDMANET_ASSIGN_OR_RETURN(LinkInfo l, nl.linkByName(st.host_ifname));
      st.dev_pod_ifindex = l.ifindex;
      RDMANET_RETURN_IF_ERROR(nl.rename(l.ifindex, ctx.env.ifname));
      if (c.mtu) RDMANET_RETURN_IF_ERROR(nl.setMtu(l.ifindex, *c.mtu));
      if (c.mac) RDMANET_RETURN_IF_ERROR(nl.setMac(l.ifindex, *c.mac));
      return okStatus();
    });
  }

  Status check(const AttachContext& ctx, const AttachmentState& st) override {
    const NetConf& c = ctx.conf;
    RDMANET_ASSIGN_OR_RETURN(LinkInfo pf, ctx.deps.host.linkByName(st.pf_name));
    RDMANET_ASSIGN_OR_RETURN(auto vfs, ctx.deps.host.vfs(pf.ifindex));
    auto it = std::find_if(vfs.begin(), vfs.end(),
                           [&](const VfInfo& v) { return v.index == st.vf_index; });
    if (it == vfs.end()) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("VF {} is gone from {}", st.vf_index, pf.name));
    }
    std::vector<std::string> diffs;
    if (c.vlan && it->vlan != *c.vlan)
      diffs.push_back(fmt::format("vlan {} (want {})", it->vlan, *c.vlan));
    if (c.hasVlan() && it->qos != c.pcp())
      diffs.push_back(fmt::format("qos {} (want {})", it->qos, c.pcp()));
    if (c.mac && it->mac != *c.mac)
      diffs.push_back(fmt::format("mac {} (want {})", it->mac.str(), c.mac->str()));
    if (c.spoofchk && it->spoofchk != *c.spoofchk) diffs.push_back("spoofchk");
    if (c.trust && it->trust != *c.trust) diffs.push_back("trust");
    if (c.link_state && it->link_state != *c.link_state) diffs.push_back("link_state");
    // What ADD set: the netconf's rates, the max capped by the claim's share.
    const VfInfo orig = st.orig_vf.value_or(VfInfo{});
    const auto rate = vfRateFor(rateAsks(ctx, orig));
    if (rate.ok() && *rate) {
      if (c.min_tx_rate && it->min_tx_rate != (*rate)->min_mbps) diffs.push_back("min_tx_rate");
      if ((c.max_tx_rate || ctx.claim_share_mbps) && it->max_tx_rate != (*rate)->max_mbps) {
        diffs.push_back(
            fmt::format("max_tx_rate {} (want {})", it->max_tx_rate, (*rate)->max_mbps));
      }
    }
    if (!diffs.empty()) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("VF {} on {} drifted: {}", st.vf_index, pf.name, fmt::join(diffs, ", ")));
    }
    return okStatus();
  }
};

}  // namespace

std::unique_ptr<Attacher> makeSriovAttacher() { return std::make_unique<SriovAttacher>(); }

Status detachSriov(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  Status first = okStatus();
  auto note = [&](const Status& s) {
    if (!s.ok() && first.ok()) first = s;
  };
  if (st.orig_vf && !st.vf_knobs_set.empty()) {
    Netlink& host = deps.host;
    const VfInfo& o = *st.orig_vf;
    auto pf = host.linkByName(st.pf_name);
    if (!pf.ok()) {
      note(pf.error().context("PF " + st.pf_name));
    } else {
      const int p = pf->ifindex;
      const int vf = st.vf_index;
      const auto& k = st.vf_knobs_set;
      // Each restore is attempted even when an earlier one fails: leave as little as possible.
      if (has(k, "mac")) note(host.setVfMac(p, vf, o.mac));
      if (has(k, "vlan")) note(host.setVfVlan(p, vf, o.vlan, o.qos, o.vlan_proto));
      if (has(k, "rate")) note(host.setVfRate(p, vf, o.min_tx_rate, o.max_tx_rate));
      if (has(k, "spoofchk")) note(host.setVfSpoofchk(p, vf, o.spoofchk));
      if (has(k, "trust")) note(host.setVfTrust(p, vf, o.trust));
      if (has(k, "link_state")) note(host.setVfLinkState(p, vf, o.link_state));
    }
  }
  note(returnNetdevToHost(deps, st, netns));
  return first;
}

}  // namespace rdmanet::cni
