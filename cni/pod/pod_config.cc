#include "cni/pod/pod_config.h"

#include <fmt/format.h>

#include <algorithm>

namespace rdmanet::cni {
namespace {

std::optional<IpAddress> gatewayFor(const CniResult& r, int family) {
  for (const auto& ip : r.ips) {
    if (ip.address.address.family == family && ip.gateway) return ip.gateway;
  }
  return std::nullopt;
}

Route toRoute(const CniRoute& r, const CniResult& all, int ifindex) {
  Route route{.dst = r.dst, .gateway = r.gw, .ifindex = ifindex};
  if (!route.gateway) route.gateway = gatewayFor(all, r.dst.address.family);
  return route;
}

Error drift(std::string msg) { return makeError(ErrorCode::kInvalidConfig, std::move(msg)); }

}  // namespace

Result<LinkInfo> configurePod(Netlink& nl, const std::string& ifname, const CniResult& ipam) {
  RDMANET_ASSIGN_OR_RETURN(LinkInfo l, nl.linkByName(ifname));
  RDMANET_RETURN_IF_ERROR(nl.setUp(l.ifindex, true));
  for (const auto& ip : ipam.ips) {
    const Status s = nl.addAddress(l.ifindex, ip.address);
    if (!s.ok()) return s.error().context("adding " + ip.address.str() + " to " + ifname);
  }
  for (const auto& r : ipam.routes) {
    const Route route = toRoute(r, ipam, l.ifindex);
    const Status s = nl.addRoute(route);
    if (!s.ok() && s.error().sys_errno != EEXIST) {
      return s.error().context("adding route " + r.dst.str() + " via " + ifname);
    }
  }
  return nl.linkByIndex(l.ifindex);
}

Status checkPod(Netlink& nl, const PodExpectation& want) {
  auto l = nl.linkByName(want.ifname);
  if (!l.ok()) return l.error().context("CHECK: " + want.ifname + " in the pod");
  if (!l->admin_up) return drift(fmt::format("CHECK: {} is down", want.ifname));
  if (want.mac && l->mac != *want.mac) {
    return drift(fmt::format("CHECK: {} has MAC {}, expected {}", want.ifname, l->mac.str(),
                             want.mac->str()));
  }
  if (want.mtu && l->mtu != *want.mtu) {
    return drift(fmt::format("CHECK: {} has MTU {}, expected {}", want.ifname, l->mtu, *want.mtu));
  }
  RDMANET_ASSIGN_OR_RETURN(auto addrs, nl.addresses(l->ifindex));
  for (const auto& ip : want.ips.ips) {
    if (std::find(addrs.begin(), addrs.end(), ip.address) == addrs.end()) {
      return drift(fmt::format("CHECK: {} lacks address {}", want.ifname, ip.address.str()));
    }
  }
  RDMANET_ASSIGN_OR_RETURN(auto routes, nl.routes(l->ifindex));
  for (const auto& r : want.ips.routes) {
    const bool found =
        std::any_of(routes.begin(), routes.end(), [&](const Route& x) { return x.dst == r.dst; });
    if (!found) {
      return drift(fmt::format("CHECK: route to {} via {} is missing", r.dst.str(), want.ifname));
    }
  }
  return okStatus();
}

}  // namespace rdmanet::cni
