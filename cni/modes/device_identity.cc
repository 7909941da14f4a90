#include "cni/modes/device_identity.h"

#include "common/base/pci_address.h"
#include "common/inventory/netdev.h"

namespace rdmanet::cni {
namespace {

// What a state file proves with: its own record, or for an older file its PCI address.
struct Identity {
  std::string parent{};
  MacAddress perm_mac{};
  std::string kind{};
  int pod_ifindex = 0;
  bool legacy = false;  // an older file with no PCI address: names, physical links, pod only
};

Identity identityOf(const AttachmentState& st) {
  if (st.has_identity) {
    return {.parent = st.dev_parent,
            .perm_mac = st.dev_perm_mac,
            .kind = st.dev_kind,
            .pod_ifindex = st.dev_pod_ifindex};
  }
  return {.parent = st.pci, .legacy = st.pci.empty()};
}

bool physicalProof(const Identity& id) { return !id.parent.empty() || !id.perm_mac.isZero(); }

}  // namespace

void recordIdentity(AttachmentState& st, const LinkInfo& dev) {
  st.has_identity = true;
  st.dev_parent = dev.parent_dev;
  st.dev_perm_mac = dev.perm_mac;
  st.dev_kind = dev.kind;
  st.dev_pod_ifindex = dev.ifindex;
}

bool provesDevice(const AttachmentState& st, const LinkInfo& l, Side side) {
  const Identity id = identityOf(st);
  if (!id.parent.empty()) return l.kind.empty() && l.parent_dev == id.parent;
  if (!id.perm_mac.isZero()) {
    return l.kind.empty() && l.perm_mac == id.perm_mac &&
           (side == Side::kHost || l.ifindex == id.pod_ifindex);
  }
  if (id.legacy) return side == Side::kPod && l.kind.empty();
  if (side == Side::kHost) {
    // Never moved (an ADD that stopped before the move): still at the ifindex ADD found it at,
    // under its name. The host does not hand a freed ifindex out again soon, and no pod creates
    // links here.
    return st.host_ifindex > 0 && l.ifindex == st.host_ifindex && l.name == st.host_ifname &&
           l.kind == id.kind;
  }
  return id.pod_ifindex > 0 && l.ifindex == id.pod_ifindex && l.kind == id.kind;
}

Result<std::optional<LinkInfo>> provenInPod(Netlink& nl, const AttachmentState& st) {
  const Identity id = identityOf(st);
  if (physicalProof(id)) {
    // Under any name: the pod, or a DEL that failed half-way, may have renamed it.
    RDMANET_ASSIGN_OR_RETURN(auto links, nl.links());
    for (const LinkInfo& l : links) {
      if (provesDevice(st, l, Side::kPod)) return std::optional<LinkInfo>(l);
    }
    return std::optional<LinkInfo>();
  }
  if (!id.legacy) {
    auto l = nl.linkByIndex(id.pod_ifindex);
    if (!l.ok() && l.error().code != ErrorCode::kDeviceNotFound) return l.error();
    if (l.ok() && provesDevice(st, *l, Side::kPod)) return std::optional<LinkInfo>(*l);
    return std::optional<LinkInfo>();
  }
  // An older file without a PCI address: the physical link ADD named CNI_IFNAME (or left as
  // the lower of a VLAN of that name), or one a half-done DEL renamed back already.
  for (const std::string& name : {st.ifname, st.pod_lower, st.host_ifname}) {
    if (name.empty()) continue;
    auto l = nl.linkByName(name);
    if (!l.ok()) {
      if (l.error().code != ErrorCode::kDeviceNotFound) return l.error();
      continue;
    }
    if (provesDevice(st, *l, Side::kPod)) return std::optional<LinkInfo>(*l);
  }
  return std::optional<LinkInfo>();
}

Result<std::optional<LinkInfo>> provenInHost(PluginDeps& deps, const AttachmentState& st,
                                             const std::optional<LinkInfo>& moved) {
  auto named = deps.host.linkByName(st.host_ifname);
  if (!named.ok() && named.error().code != ErrorCode::kDeviceNotFound) return named.error();
  if (named.ok()) {
    // Just moved out under this name (a name clash would have failed the move).
    const bool just_moved = moved && named->kind == moved->kind && named->mac == moved->mac;
    if (just_moved || provesDevice(st, *named, Side::kHost)) return std::optional<LinkInfo>(*named);
  }
  const Identity id = identityOf(st);
  if (!physicalProof(id)) return std::optional<LinkInfo>();
  // Where sysfs lists the function's netdev (one read), else every link.
  if (auto pci = PciAddress::parse(id.parent); pci.ok()) {
    for (const std::string& name : netdevNamesOf(deps.sysfs, *pci)) {
      auto l = deps.host.linkByName(name);
      if (l.ok() && provesDevice(st, *l, Side::kHost)) return std::optional<LinkInfo>(*l);
    }
  }
  RDMANET_ASSIGN_OR_RETURN(auto links, deps.host.links());
  for (const LinkInfo& l : links) {
    if (provesDevice(st, l, Side::kHost)) return std::optional<LinkInfo>(l);
  }
  return std::optional<LinkInfo>();
}

}  // namespace rdmanet::cni
