// FakeNetlink: dumps, SR-IOV, addresses, routes, DCB, RDMA; and FakeNetnsRunner.
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/if_ether.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "tests/fakes/fake_kernel_internal.h"
#include "tests/fakes/fake_netlink.h"

namespace rdmanet {
namespace {

constexpr int kDumpAttempts = 4;  // same retry budget as LibnlNetlink

bool samePrefix(const IpPrefix& a, const IpPrefix& b) { return a == b; }

// True when `ip` lies inside `p`.
bool contains(const IpPrefix& p, const IpAddress& ip) {
  if (p.address.family != ip.family) return false;
  int bits = p.prefix_len;
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((p.address.bytes[i] & mask) != (ip.bytes[i] & mask)) return false;
  }
  return true;
}

bool validPrefix(const IpPrefix& p) {
  if (p.address.family == AF_INET) return p.prefix_len >= 0 && p.prefix_len <= 32;
  if (p.address.family == AF_INET6) return p.prefix_len >= 0 && p.prefix_len <= 128;
  return false;
}

}  // namespace

template <typename T>
Result<std::vector<T>> FakeNetlink::dumpOf(
    FakeOp op, int ifindex, const std::function<std::vector<T>(FakeKernel::Ns&)>& fn) {
  std::vector<T> out;
  Status st = mutate(op, ifindex > 0 ? std::to_string(ifindex) : "", [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    if (ifindex > 0 && !kernel_.findLocked(ns, ifindex)) return ENODEV;
    for (int attempt = 0; attempt < kDumpAttempts; ++attempt) {
      // Only real dumps can be interrupted; vfs() is a single GETLINK.
      if (kernel_.dump_interrupts_ > 0 && op != FakeOp::kVfs) {
        --kernel_.dump_interrupts_;
        continue;
      }
      out = fn(ns);
      return 0;
    }
    return EINTR;  // interrupted kDumpAttempts times in a row
  });
  if (!st.ok() && st.error().sys_errno == EINTR) {
    return errnoError(ErrorCode::kTryAgainLater, EINTR,
                      std::string("fake ") + fakeOpName(op) + ": dump interrupted");
  }
  if (!st.ok()) return st.error();
  return out;
}

Result<std::vector<LinkInfo>> FakeNetlink::links() {
  return dumpOf<LinkInfo>(FakeOp::kLinks, 0, [](FakeKernel::Ns& ns) {
    std::vector<LinkInfo> out;
    for (auto& [idx, l] : ns.links) out.push_back(l.info);
    return out;
  });
}

Result<std::vector<VfInfo>> FakeNetlink::vfs(int pf) {
  return dumpOf<VfInfo>(FakeOp::kVfs, pf,
                        [&](FakeKernel::Ns& ns) { return kernel_.findLocked(ns, pf)->vfs; });
}

Status FakeNetlink::setVf(FakeOp op, int pf, int vf, VfKnob knob,
                          const std::function<int(VfInfo&)>& fn) {
  return mutate(op, fmt::format("pf {}, vf {}", pf, vf), [&] {
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), pf);
    if (!l) return ENODEV;
    if (vf < 0 || vf >= static_cast<int>(l->vfs.size())) return EINVAL;
    if (l->unsupported_vf_knobs.count(knob)) return EOPNOTSUPP;
    return fn(l->vfs[vf]);
  });
}

Status FakeNetlink::setVfMac(int pf, int vf, const MacAddress& mac) {
  return setVf(FakeOp::kSetVfMac, pf, vf, VfKnob::kMac, [&](VfInfo& v) {
    if (mac.isMulticast()) return EINVAL;
    v.mac = mac;
    return 0;
  });
}

Status FakeNetlink::setVfVlan(int pf, int vf, uint16_t vlan, uint8_t qos, uint16_t proto) {
  return setVf(FakeOp::kSetVfVlan, pf, vf, VfKnob::kVlan, [&](VfInfo& v) {
    if (vlan > 4095 || qos > 7) return EINVAL;
    if (proto != ETH_P_8021Q && proto != ETH_P_8021AD) return EPROTONOSUPPORT;
    v.vlan = vlan;
    v.qos = qos;
    v.vlan_proto = proto;
    return 0;
  });
}

Status FakeNetlink::setVfSpoofchk(int pf, int vf, bool on) {
  return setVf(FakeOp::kSetVfSpoofchk, pf, vf, VfKnob::kSpoofchk, [&](VfInfo& v) {
    v.spoofchk = on;
    return 0;
  });
}

Status FakeNetlink::setVfTrust(int pf, int vf, bool on) {
  return setVf(FakeOp::kSetVfTrust, pf, vf, VfKnob::kTrust, [&](VfInfo& v) {
    v.trust = on;
    return 0;
  });
}

Status FakeNetlink::setVfLinkState(int pf, int vf, VfLinkState state) {
  return setVf(FakeOp::kSetVfLinkState, pf, vf, VfKnob::kLinkState, [&](VfInfo& v) {
    v.link_state = state;
    return 0;
  });
}

Status FakeNetlink::setVfRate(int pf, int vf, uint32_t min_mbps, uint32_t max_mbps) {
  return setVf(FakeOp::kSetVfRate, pf, vf, VfKnob::kRate, [&](VfInfo& v) {
    if (max_mbps != 0 && min_mbps > max_mbps) return EINVAL;
    v.min_tx_rate = min_mbps;
    v.max_tx_rate = max_mbps;
    return 0;
  });
}

Result<std::vector<IpPrefix>> FakeNetlink::addresses(int ifindex) {
  return dumpOf<IpPrefix>(FakeOp::kAddresses, ifindex, [&](FakeKernel::Ns& ns) {
    return kernel_.findLocked(ns, ifindex)->addresses;
  });
}

Status FakeNetlink::addAddress(int ifindex, const IpPrefix& prefix) {
  return mutate(FakeOp::kAddAddress, fmt::format("{}, {}", ifindex, prefix.str()), [&] {
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), ifindex);
    if (!l) return ENODEV;
    if (!validPrefix(prefix)) return EINVAL;
    for (const IpPrefix& p : l->addresses) {
      if (p.address == prefix.address) return EEXIST;
    }
    l->addresses.push_back(prefix);
    return 0;
  });
}

Status FakeNetlink::deleteAddress(int ifindex, const IpPrefix& prefix) {
  return mutate(FakeOp::kDeleteAddress, fmt::format("{}, {}", ifindex, prefix.str()), [&] {
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), ifindex);
    if (!l) return ENODEV;
    std::erase_if(l->addresses, [&](const IpPrefix& p) { return samePrefix(p, prefix); });
    return 0;  // a missing address is success, as LibnlNetlink maps EADDRNOTAVAIL
  });
}

Result<std::vector<Route>> FakeNetlink::routes(int ifindex) {
  return dumpOf<Route>(FakeOp::kRoutes, ifindex, [&](FakeKernel::Ns& ns) {
    std::vector<Route> out;
    for (const Route& r : ns.routes) {
      if (r.ifindex == ifindex) out.push_back(r);
    }
    return out;
  });
}

Status FakeNetlink::addRoute(const Route& route) {
  return mutate(FakeOp::kAddRoute, fmt::format("{} dev {}", route.dst.str(), route.ifindex), [&] {
    FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
    FakeLink* l = kernel_.findLocked(ns, route.ifindex);
    if (!l) return ENODEV;
    if (!validPrefix(route.dst)) return EINVAL;
    if (route.gateway && route.gateway->family != route.dst.address.family) return EINVAL;
    // fib_check_nh: "Nexthop device is not up".
    if (route.dst.address.isV4() && !l->info.admin_up) return ENETDOWN;
    if (route.gateway) {
      const bool link_local = !route.gateway->isV4() && route.gateway->bytes[0] == 0xfe &&
                              (route.gateway->bytes[1] & 0xc0) == 0x80;
      const bool on_link =
          std::any_of(l->addresses.begin(), l->addresses.end(),
                      [&](const IpPrefix& p) { return contains(p, *route.gateway); });
      if (!link_local && !on_link) return ENETUNREACH;  // "Nexthop has invalid gateway"
    }
    for (const Route& r : ns.routes) {
      if (r.dst == route.dst) return EEXIST;  // one route per destination in the main table
    }
    ns.routes.push_back(route);
    return 0;
  });
}

Status FakeNetlink::deleteRoute(const Route& route) {
  return mutate(
      FakeOp::kDeleteRoute, fmt::format("{} dev {}", route.dst.str(), route.ifindex), [&] {
        FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
        std::erase_if(ns.routes, [&](const Route& r) {
          return r.dst == route.dst && (route.ifindex == 0 || r.ifindex == route.ifindex) &&
                 (!route.gateway || r.gateway == route.gateway);
        });
        return 0;  // ESRCH is success for LibnlNetlink too
      });
}

Result<DcbState> FakeNetlink::dcb(const std::string& ifname) {
  DcbState out;
  RDMANET_RETURN_IF_ERROR(mutate(FakeOp::kDcb, ifname, [&] {
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), ifname);
    if (!l) return ENODEV;
    out = l->dcb.value_or(DcbState{});
    return 0;
  }));
  return out;
}

Result<RdmaNetnsMode> FakeNetlink::rdmaNetnsMode() {
  RdmaNetnsMode mode = RdmaNetnsMode::kShared;
  RDMANET_RETURN_IF_ERROR(mutate(
      FakeOp::kRdmaNetnsMode, "",
      [&] {
        if (!kernel_.rdma_supported_) return EPROTONOSUPPORT;
        mode = kernel_.rdma_mode_;
        return 0;
      },
      ErrorCode::kRdmaFailure));
  return mode;
}

Status FakeNetlink::moveRdmaToNetns(const std::string& dev, int netns_fd) {
  const auto target = kernel_.netnsOfFd(netns_fd);
  return mutate(
      FakeOp::kMoveRdmaToNetns, fmt::format("{}, fd {}", dev, netns_fd),
      [&] {
        if (!kernel_.rdma_supported_) return EPROTONOSUPPORT;
        auto it = kernel_.rdma_.find(dev);
        if (it == kernel_.rdma_.end() || it->second.first != ns_) return ENODEV;
        if (kernel_.rdma_mode_ == RdmaNetnsMode::kShared) return EOPNOTSUPP;
        if (!target || !kernel_.nsLocked(*target)) return EINVAL;
        it->second.first = *target;
        return 0;
      },
      ErrorCode::kRdmaFailure);
}

Result<std::vector<RdmaLink>> FakeNetlink::rdmaLinks() {
  std::vector<RdmaLink> out;
  RDMANET_RETURN_IF_ERROR(mutate(
      FakeOp::kRdmaLinks, "",
      [&] {
        if (!kernel_.rdma_supported_) return EPROTONOSUPPORT;
        FakeKernel::Ns& ns = *kernel_.nsLocked(ns_);
        for (const auto& [dev, where] : kernel_.rdma_) {
          if (kernel_.rdma_mode_ == RdmaNetnsMode::kExclusive && where.first != ns_) continue;
          RdmaLink l;
          l.device = dev;
          l.port = 1;
          for (const auto& [idx, link] : ns.links) {
            if (link.rdma_device == dev) {
              l.netdev_ifindex = idx;
              l.netdev = link.info.name;
            }
          }
          out.push_back(std::move(l));
        }
        return 0;
      },
      ErrorCode::kRdmaFailure));
  return out;
}

FakeNetnsRunner::FakeNetnsRunner(FakeKernel& kernel) : kernel_(kernel) {
  paths_["/proc/self/ns/net"] = FakeKernel::kHost;
  paths_["/proc/thread-self/ns/net"] = FakeKernel::kHost;
}

void FakeNetnsRunner::addNetns(const std::string& path, const std::string& ns) {
  kernel_.addNetns(ns);
  paths_[path] = ns;
}

void FakeNetnsRunner::removePath(const std::string& path) { paths_.erase(path); }

Result<std::string> FakeNetnsRunner::resolve(const std::string& path) const {
  if (path.empty() || path[0] != '/' || path.find("..") != std::string::npos) {
    return makeError(ErrorCode::kInvalidEnv, "netns path \"" + path + "\" is not valid");
  }
  auto it = paths_.find(path);
  if (it == paths_.end() || !kernel_.hasNetns(it->second)) {
    return errnoError(ErrorCode::kContainerUnknown, ENOENT, "netns \"" + path + "\"");
  }
  return it->second;
}

Status FakeNetnsRunner::run(const std::string& netns_path, const Fn& fn) {
  RDMANET_ASSIGN_OR_RETURN(std::string ns, resolve(netns_path));
  {
    std::lock_guard lock(kernel_.mu_);
    if (int err = kernel_.enter(FakeOp::kRunInNetns, ns, netns_path)) {
      return errnoError(ErrorCode::kNetnsFailure, err, "fake setns into \"" + netns_path + "\"");
    }
  }
  ++runs_;
  FakeNetlink nl(kernel_, ns);
  return fn(nl);
}

Result<NetnsHandle> FakeNetnsRunner::open(const std::string& netns_path) {
  RDMANET_ASSIGN_OR_RETURN(std::string ns, resolve(netns_path));
  {
    std::lock_guard lock(kernel_.mu_);
    if (int err = kernel_.enter(FakeOp::kOpenNetns, ns, netns_path)) {
      return errnoError(ErrorCode::kNetnsFailure, err, "fake open of \"" + netns_path + "\"");
    }
  }
  NetnsHandle h = kernel_.netnsHandle(ns);
  if (!h.valid()) return errnoError(ErrorCode::kContainerUnknown, ENOENT, netns_path);
  return h;
}

Status FakeNetlink::setEgressRate(int ifindex, uint32_t mbps) {
  return mutate(FakeOp::kSetEgressRate, fmt::format("{}, {}", ifindex, mbps), [&] {
    FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), ifindex);
    if (!l) return ENODEV;
    if (mbps == 0) return EINVAL;  // TBF refuses a zero rate
    l->egress_rate_mbps = mbps;
    return 0;
  });
}

Result<std::optional<uint64_t>> FakeNetlink::egressRate(int ifindex) {
  std::optional<uint64_t> out;
  RDMANET_RETURN_IF_ERROR(mutate(FakeOp::kEgressRate, std::to_string(ifindex), [&] {
    const FakeLink* l = kernel_.findLocked(*kernel_.nsLocked(ns_), ifindex);
    if (!l) return ENODEV;
    out = l->egress_rate_mbps;
    return 0;
  }));
  return out;
}

}  // namespace rdmanet
