#include "cni/modes/state_recovery.h"

#include <fmt/format.h>

#include <algorithm>

#include "cni/modes/device_identity.h"
#include "cni/modes/mode.h"
#include "cni/modes/shared_vlan.h"
#include "common/inventory/netdev.h"
#include "common/inventory/pci.h"

namespace rdmanet::cni {
namespace {

// What a VF looks like before anyone configures it through its PF.
VfInfo defaultVf(int index) {
  VfInfo v;
  v.index = index;
  v.spoofchk = true;
  return v;
}

// The knobs (named as AttachmentState::vf_knobs_set names them) where `vf` is off the defaults.
std::vector<std::string> knobsOffDefault(const VfInfo& vf) {
  const VfInfo d = defaultVf(vf.index);
  std::vector<std::string> out;
  if (vf.mac != d.mac) out.push_back("mac");
  if (vf.vlan != d.vlan || vf.qos != d.qos || vf.vlan_proto != d.vlan_proto) out.push_back("vlan");
  if (vf.min_tx_rate != d.min_tx_rate || vf.max_tx_rate != d.max_tx_rate) out.push_back("rate");
  if (vf.spoofchk != d.spoofchk) out.push_back("spoofchk");
  if (vf.trust != d.trust) out.push_back("trust");
  if (vf.link_state != d.link_state) out.push_back("link_state");
  return out;
}

// The device found in the pod.
struct InPod {
  LinkInfo dev;
  std::string pod_lower{};  // its name in the pod when not CNI_IFNAME (a VLAN lower, ...)
  std::vector<std::string> rdma{};
};

// The device in the pod. With a PCI function, any link the kernel ties to it, whatever its name
// (a DEL that failed half-way may have renamed it already); else the link named CNI_IFNAME or
// the netconf's `device`. A VLAN named CNI_IFNAME leads to the device under it.
Result<std::optional<LinkInfo>> deviceInPod(Netlink& nl, const CniEnv& env, const NetConf& conf,
                                            const std::optional<PciFunction>& fn) {
  if (fn) {
    RDMANET_ASSIGN_OR_RETURN(auto links, nl.links());
    for (const auto& l : links) {
      if (l.parent_dev == fn->address.str()) return std::optional<LinkInfo>(l);
    }
    return std::optional<LinkInfo>();
  }
  for (const std::string& name : {env.ifname, conf.device}) {
    if (name.empty()) continue;
    auto l = nl.linkByName(name);
    if (!l.ok()) {
      if (l.error().code != ErrorCode::kDeviceNotFound) return l.error();
      continue;
    }
    if (l->kind == "vlan" && l->parent_ifindex > 0) l = nl.linkByIndex(l->parent_ifindex);
    if (l.ok() && l->kind.empty()) return std::optional<LinkInfo>(*l);  // a physical device
  }
  return std::optional<LinkInfo>();
}

Result<std::optional<InPod>> findInPod(PluginDeps& deps, const CniEnv& env, const NetConf& conf,
                                       const std::optional<PciFunction>& fn, bool rdma_exclusive) {
  std::optional<InPod> found;
  auto ran = runInPodIfExists(deps, env.netns, [&](Netlink& nl) -> Status {
    RDMANET_ASSIGN_OR_RETURN(auto dev, deviceInPod(nl, env, conf, fn));
    if (!dev) return okStatus();
    InPod p{.dev = *dev};
    // Under another name (a VLAN's lower, or renamed by an earlier attempt), the release path
    // looks it up by that name.
    if (dev->name != env.ifname) p.pod_lower = dev->name;
    if (rdma_exclusive) {
      RDMANET_ASSIGN_OR_RETURN(auto links, nl.rdmaLinks());
      for (const auto& r : links) {
        if (r.netdev_ifindex == dev->ifindex &&
            std::find(p.rdma.begin(), p.rdma.end(), r.device) == p.rdma.end()) {
          p.rdma.push_back(r.device);
        }
      }
    }
    found = std::move(p);
    return okStatus();
  });
  if (!ran.ok()) return ran.error();
  return found;
}

// The name the device gets back in the host: the first candidate that is valid and free.
std::string hostNameFor(PluginDeps& deps, const NetConf& conf, const std::optional<PciFunction>& fn,
                        const std::string& pf_name, int vf_index) {
  std::vector<std::string> names;
  if (fn) names = netdevNamesOf(deps.sysfs, fn->address);  // a tree that still lists it
  if (!conf.device.empty()) names.push_back(conf.device);
  if (!pf_name.empty()) names.push_back(fmt::format("{}v{}", pf_name, vf_index));
  if (fn) {
    const PciAddress& a = fn->address;
    const std::string domain = a.domain != 0 ? fmt::format("P{}", a.domain) : "";
    names.push_back(fmt::format("en{}p{}s{}f{}", domain, a.bus, a.device, a.function));
    names.push_back(fmt::format("rdmanet{:02x}{:02x}", a.bus, (a.device << 3) | a.function));
  }
  for (const auto& n : names) {
    if (isValidIfname(n) && !deps.host.linkByName(n).ok()) return n;
  }
  return "";
}

}  // namespace

Result<std::optional<AttachmentState>> recoverState(PluginDeps& deps, const CniEnv& env,
                                                    const NetConf& conf) {
  AttachmentState st = AttachmentState::forInvocation(env, conf);
  st.complete = true;

  const bool macvlan = conf.mode ? *conf.mode == Mode::kMacvlan : !conf.master.empty();
  if (macvlan) {
    st.mode = Mode::kMacvlan;
    st.host_ifname = conf.master;
    if (conf.hasVlan() && !conf.master.empty()) {
      st.vlan_link = sharedVlanName(conf.master, *conf.vlan);
    }
    return std::optional<AttachmentState>(std::move(st));
  }
  if (env.netns.empty()) return std::optional<AttachmentState>();

  std::optional<PciFunction> fn;
  if (conf.device_id) {
    auto r = readPciFunction(deps.sysfs, *conf.device_id);
    if (!r.ok()) {
      deps.log.warn("DEL: PCI device {} not found; nothing to return", conf.device_id->str());
      return std::optional<AttachmentState>();
    }
    fn = std::move(r).value();
  } else if (conf.device.empty() && !conf.hwaddr) {
    return std::optional<AttachmentState>();  // ADD could not have attached anything
  }
  st.mode = conf.mode.value_or(fn && fn->isVf() ? Mode::kSriov : Mode::kHostDevice);
  if (st.mode == Mode::kSriov && (!fn || !fn->isVf() || !fn->vf_index)) {
    return std::optional<AttachmentState>();
  }
  if (st.mode == Mode::kHostDevice && !conf.device.empty() &&
      deps.host.linkByName(conf.device).ok()) {
    return std::optional<AttachmentState>();  // the named device is in the host: nothing to return
  }

  auto rdma_mode = deps.host.rdmaNetnsMode();
  const bool exclusive = rdma_mode.ok() && *rdma_mode == RdmaNetnsMode::kExclusive;
  RDMANET_ASSIGN_OR_RETURN(auto pod, findInPod(deps, env, conf, fn, exclusive));
  if (!pod) return std::optional<AttachmentState>();

  if (st.mode == Mode::kSriov) {
    auto pf = readPciFunction(deps.sysfs, *fn->pf);
    const auto pf_names =
        pf.ok() ? netdevNamesOf(deps.sysfs, pf->address) : std::vector<std::string>{};
    if (pf_names.empty()) {
      return makeError(ErrorCode::kDeviceNotFound,
                       fmt::format("DEL: the PF {} of VF {} has no netdev in the host",
                                   fn->pf->str(), fn->address.str()));
    }
    st.pf_name = pf_names.front();
    st.pf_pci = fn->pf->str();
    st.vf_index = *fn->vf_index;
    RDMANET_ASSIGN_OR_RETURN(LinkInfo pfl, deps.host.linkByName(st.pf_name));
    RDMANET_ASSIGN_OR_RETURN(auto vfs, deps.host.vfs(pfl.ifindex));
    for (const auto& v : vfs) {
      if (v.index == st.vf_index) st.vf_knobs_set = knobsOffDefault(v);
    }
    st.orig_vf = defaultVf(st.vf_index);
  }
  st.pci = fn ? fn->address.str() : pod->dev.parent_dev;
  if (!st.pci.empty() && !PciAddress::parse(st.pci).ok()) st.pci.clear();
  st.pod_lower = pod->pod_lower;
  recordIdentity(st, pod->dev);  // found by its parent device, or physical under our name
  st.rdma_moved = pod->rdma;
  st.host_ifname = hostNameFor(deps, conf, fn, st.pf_name, st.vf_index);
  if (st.host_ifname.empty()) {
    return makeError(
        ErrorCode::kTryAgainLater,
        fmt::format("DEL: no free name in the host to return {} under", pod->dev.name));
  }
  deps.log.warn("DEL: no state for {}/{}, but {} ({}) is in the pod: returning it as {}{}",
                env.container_id, env.ifname, pod->dev.name,
                st.pci.empty() ? std::string("no PCI address") : st.pci, st.host_ifname,
                st.vf_knobs_set.empty()
                    ? std::string()
                    : fmt::format(", resetting VF {} of {} ({}) to defaults", st.vf_index,
                                  st.pf_name, fmt::join(st.vf_knobs_set, ",")));
  return std::optional<AttachmentState>(std::move(st));
}

}  // namespace rdmanet::cni
