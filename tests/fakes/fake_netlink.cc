// FakeNetlink: link operations over FakeKernel state.
#include "tests/fakes/fake_netlink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/if_ether.h>

#include <algorithm>
#include <cerrno>

#include "tests/fakes/fake_kernel_internal.h"

namespace rdmanet {

Status FakeNetlink::mutate(FakeOp op, const std::string& args, const std::function<int()>& fn,
                           ErrorCode code) {
  std::lock_guard lock(kernel_.mu_);
  int err = kernel_.enter(op, ns_, args);
  if (err == 0 && !kernel_.nsLocked(ns_)) err = ENODEV;  // our namespace was destroyed
  if (err == 0) err = fn();
  if (err == 0) {
    if (isMutation(op)) kernel_.notifyLocked();
    return okStatus();
  }
  const std::string what = fmt::format("fake {}({})", fakeOpName(op), args);
  return errnoError(err == ENODEV ? ErrorCode::kDeviceNotFound : code, err, what);
}

Result<LinkInfo> FakeNetlink::linkByName(const std::string& name) {
  LinkInfo out;
  RDMANET_RETURN_IF_ERROR(mutate(FakeOp::kLinkByName, name, [&] {
    if (!validIfname(name)) return EINVAL;
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), name);
    if (!l) return ENODEV;
    out = l->info;
    return 0;
  }));
  return out;
}

Result<LinkInfo> FakeNetlink::linkByIndex(int ifindex) {
  LinkInfo out;
  RDMANET_RETURN_IF_ERROR(mutate(FakeOp::kLinkByIndex, std::to_string(ifindex), [&] {
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), ifindex);
    if (!l) return ENODEV;
    out = l->info;
    return 0;
  }));
  return out;
}

Status FakeNetlink::setUp(int ifindex, bool up) {
  return mutate(FakeOp::kSetUp, fmt::format("{}, {}", ifindex, up ? "up" : "down"), [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    FakeLink* l = kernel_.findLocked(ns, ifindex);
    if (!l) return ENODEV;
    l->info.admin_up = up;
    refreshOperstate(*l);
    // A macvlan/vlan follows its lower device's carrier.
    if (l->info.parent_ifindex > 0) {
      if (FakeLink* lower = kernel_.findLocked(ns, l->info.parent_ifindex)) {
        l->info.carrier = lower->info.admin_up && lower->info.carrier;
        refreshOperstate(*l);
      }
    }
    for (auto& [idx, upper] : ns.links) {
      if (upper.info.parent_ifindex == ifindex && !upper.physical) {
        upper.info.carrier = up && l->info.carrier;
        refreshOperstate(upper);
      }
    }
    // IPv4 routes through a link that goes down are flushed (fib_disable_ip).
    if (!up) {
      std::erase_if(ns.routes,
                    [&](const Route& r) { return r.ifindex == ifindex && r.dst.address.isV4(); });
    }
    return 0;
  });
}

Status FakeNetlink::rename(int ifindex, const std::string& name) {
  return mutate(FakeOp::kRename, fmt::format("{}, {}", ifindex, name), [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    FakeLink* l = kernel_.findLocked(ns, ifindex);
    if (!l) return ENODEV;
    if (!validIfname(name)) return EINVAL;
    if (l->info.name == name) return 0;
    if (kernel_.findLocked(ns, name)) return EEXIST;
    if (l->info.admin_up && !kernel_.rename_up_ok_) return EBUSY;
    l->info.name = name;
    return 0;
  });
}

Status FakeNetlink::setMtu(int ifindex, uint32_t mtu) {
  return mutate(FakeOp::kSetMtu, fmt::format("{}, {}", ifindex, mtu), [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    FakeLink* l = kernel_.findLocked(ns, ifindex);
    if (!l) return ENODEV;
    if (mtu < l->min_mtu || mtu > l->max_mtu) return EINVAL;
    if (!l->physical && l->info.parent_ifindex > 0) {
      FakeLink* lower = kernel_.findLocked(ns, l->info.parent_ifindex);
      if (lower && mtu > lower->info.mtu) return EINVAL;
    }
    l->info.mtu = mtu;
    return 0;
  });
}

Status FakeNetlink::setMac(int ifindex, const MacAddress& mac) {
  return mutate(FakeOp::kSetMac, fmt::format("{}, {}", ifindex, mac.str()), [&] {
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), ifindex);
    if (!l) return ENODEV;
    if (mac.isZero() || mac.isMulticast()) return EADDRNOTAVAIL;
    l->info.mac = mac;
    return 0;
  });
}

Status FakeNetlink::moveToNetns(int ifindex, int netns_fd) {
  // Resolved before taking the kernel lock (netnsOfFd locks it).
  const auto target = kernel_.netnsOfFd(netns_fd);
  const bool bad_fd = fcntl(netns_fd, F_GETFD) < 0;
  return mutate(FakeOp::kMoveToNetns, fmt::format("{}, fd {}", ifindex, netns_fd), [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    FakeLink* l = kernel_.findLocked(ns, ifindex);
    if (!l) return ENODEV;
    if (bad_fd) return EBADF;
    FakeKernel::Ns* dst = target ? kernel_.nsLocked(*target) : nullptr;
    if (!dst) return EINVAL;
    if (l->info.name == "lo") return EINVAL;
    if (dst == &ns) return 0;
    if (kernel_.findLocked(*dst, l->info.name)) return EEXIST;
    FakeLink moved = *l;
    // dev_change_net_namespace closes the device and the unregister notifiers flush its
    // addresses and routes; the lower-device link is meaningless across namespaces.
    moved.info.admin_up = false;
    moved.addresses.clear();
    refreshOperstate(moved);
    ns.links.erase(ifindex);
    std::erase_if(ns.routes, [&](const Route& r) { return r.ifindex == ifindex; });
    kernel_.insertLocked(*dst, std::move(moved), ifindex);
    return 0;
  });
}

Result<int> FakeNetlink::createLink(FakeOp op, const std::string& args, FakeLink link, int netns_fd,
                                    int pre_err) {
  std::optional<std::string> target;
  bool bad_fd = false;
  if (netns_fd >= 0) {
    target = kernel_.netnsOfFd(netns_fd);
    bad_fd = fcntl(netns_fd, F_GETFD) < 0;
  }
  int created = 0;
  RDMANET_RETURN_IF_ERROR(mutate(op, args, [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    if (pre_err != 0) return pre_err;
    if (!validIfname(link.info.name)) return EINVAL;
    FakeLink* lower = kernel_.findLocked(ns, link.info.parent_ifindex);
    if (!lower) return ENODEV;
    if (bad_fd) return EBADF;
    FakeKernel::Ns* dst = &ns;
    if (netns_fd >= 0) {
      dst = target ? kernel_.nsLocked(*target) : nullptr;
      if (!dst) return EINVAL;
    }
    if (kernel_.findLocked(*dst, link.info.name)) return EEXIST;
    if (link.info.mtu == 0) link.info.mtu = lower->info.mtu;
    if (link.info.mtu > lower->info.mtu || link.info.mtu < 68) return EINVAL;
    if (link.macvlan_mode) {
      // Passthru takes the master exclusively (macvlan_common_newlink: -EINVAL both ways).
      for (auto& [idx, other] : ns.links) {
        if (!other.macvlan_mode || other.info.parent_ifindex != link.info.parent_ifindex) continue;
        if (*other.macvlan_mode == MacvlanMode::kPassthru ||
            *link.macvlan_mode == MacvlanMode::kPassthru) {
          return EINVAL;
        }
      }
      // Passthru inherits the master's MAC; the others get a random one.
      if (link.info.mac.isZero()) {
        link.info.mac =
            *link.macvlan_mode == MacvlanMode::kPassthru ? lower->info.mac : kernel_.nextMac();
      }
    } else {
      for (auto& [idx, other] : ns.links) {
        if (other.vlan_id == link.vlan_id && other.vlan_proto == link.vlan_proto &&
            other.info.parent_ifindex == link.info.parent_ifindex) {
          return EEXIST;
        }
      }
      if (link.info.mac.isZero()) link.info.mac = lower->info.mac;
    }
    if (link.info.mac.isMulticast()) return EADDRNOTAVAIL;
    link.info.carrier = lower->info.admin_up && lower->info.carrier;
    refreshOperstate(link);
    const int idx = kernel_.insertLocked(*dst, std::move(link), 0);
    created = dst == &ns ? idx : 0;
    return 0;
  }));
  return created;
}

Result<int> FakeNetlink::addMacvlan(const MacvlanSpec& spec) {
  FakeLink l;
  l.info.name = spec.name;
  l.info.kind = "macvlan";
  l.info.mac = spec.mac.value_or(MacAddress{});
  l.info.mtu = spec.mtu;
  l.info.parent_ifindex = spec.master_ifindex;
  l.macvlan_mode = spec.mode;
  return createLink(FakeOp::kAddMacvlan,
                    fmt::format("{}, master {}, mode {}", spec.name, spec.master_ifindex,
                                static_cast<int>(spec.mode)),
                    std::move(l), spec.netns_fd);
}

Result<int> FakeNetlink::addVlan(const VlanSpec& spec) {
  int pre_err = 0;
  {
    std::lock_guard lock(kernel_.mu_);
    // Unknown link kind without the 8021q module: rtnl_newlink answers EOPNOTSUPP.
    if (!kernel_.vlan_supported_) pre_err = EOPNOTSUPP;
  }
  if (pre_err == 0 && spec.vlan_id > 4094) pre_err = ERANGE;
  if (pre_err == 0 && spec.proto != ETH_P_8021Q && spec.proto != ETH_P_8021AD) {
    pre_err = EPROTONOSUPPORT;
  }
  FakeLink l;
  l.info.name = spec.name;
  l.info.kind = "vlan";
  l.info.mtu = spec.mtu;
  l.info.parent_ifindex = spec.link_ifindex;
  l.vlan_id = spec.vlan_id;
  l.vlan_proto = spec.proto;
  l.egress_qos = spec.egress_qos;
  return createLink(FakeOp::kAddVlan,
                    fmt::format("{}, link {}, id {}", spec.name, spec.link_ifindex, spec.vlan_id),
                    std::move(l), spec.netns_fd, pre_err);
}

Status FakeNetlink::deleteLink(int ifindex) {
  return mutate(FakeOp::kDeleteLink, std::to_string(ifindex), [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    FakeLink* l = kernel_.findLocked(ns, ifindex);
    if (!l) return ENODEV;
    if (l->physical) return EOPNOTSUPP;  // no rtnl_link_ops->dellink for real hardware
    kernel_.removeLinkLocked(ns, ifindex);
    return 0;
  });
}

}  // namespace rdmanet
