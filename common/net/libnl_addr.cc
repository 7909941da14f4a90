// LibnlNetlink: IPv4/IPv6 addresses and main-table routes.
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <sys/socket.h>

#include "common/net/libnl_netlink.h"
#include "common/net/libnl_socket.h"
#include "common/net/rtnl_codec.h"

namespace rdmanet {
namespace {

size_t addrLen(const IpAddress& ip) { return ip.isV4() ? 4 : 16; }

Status checkFamily(const IpAddress& ip) {
  if (ip.family == AF_INET || ip.family == AF_INET6) return okStatus();
  return errnoError(ErrorCode::kNetlinkFailure, EAFNOSUPPORT, "address without a family");
}

nl::MsgPtr addrMsg(int type, int flags, int ifindex, const IpPrefix& p) {
  ifaddrmsg ifa{};
  ifa.ifa_family = static_cast<uint8_t>(p.address.family);
  ifa.ifa_prefixlen = static_cast<uint8_t>(p.prefix_len);
  ifa.ifa_index = static_cast<uint32_t>(ifindex);
  auto msg = nl::newMsg(type, flags, &ifa, sizeof(ifa));
  // Both attributes, as iproute2 does: IPv4 keys on IFA_LOCAL, IPv6 accepts either.
  nla_put(msg.get(), IFA_LOCAL, addrLen(p.address), p.address.bytes.data());
  nla_put(msg.get(), IFA_ADDRESS, addrLen(p.address), p.address.bytes.data());
  return msg;
}

nl::MsgPtr routeMsg(int type, int flags, const Route& r) {
  rtmsg rtm{};
  rtm.rtm_family = static_cast<uint8_t>(r.dst.address.family);
  rtm.rtm_dst_len = static_cast<uint8_t>(r.dst.prefix_len);
  rtm.rtm_table = RT_TABLE_MAIN;
  rtm.rtm_type = RTN_UNICAST;
  if (type == RTM_DELROUTE) {
    // NOWHERE matches any scope, as `ip route del` does.
    rtm.rtm_scope = RT_SCOPE_NOWHERE;
  } else {
    rtm.rtm_protocol = RTPROT_BOOT;
    rtm.rtm_scope = r.gateway ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
  }
  auto msg = nl::newMsg(type, flags, &rtm, sizeof(rtm));
  if (r.dst.prefix_len > 0) {
    nla_put(msg.get(), RTA_DST, addrLen(r.dst.address), r.dst.address.bytes.data());
  }
  if (r.gateway) {
    nla_put(msg.get(), RTA_GATEWAY, addrLen(*r.gateway), r.gateway->bytes.data());
  }
  if (r.ifindex > 0) nla_put_u32(msg.get(), RTA_OIF, static_cast<uint32_t>(r.ifindex));
  return msg;
}

Status checkRoute(const Route& r) {
  RDMANET_RETURN_IF_ERROR(checkFamily(r.dst.address));
  if (r.gateway && r.gateway->family != r.dst.address.family) {
    return errnoError(ErrorCode::kNetlinkFailure, EINVAL, "route gateway family mismatch");
  }
  return okStatus();
}

// The entries of link `ifindex` in one of the kernel's tables (addresses, routes): a dump of
// `get` whose header `Header` is all zero (family AF_UNSPEC: IPv4 and IPv6), of which `parse`
// reads each `reply` message into an Entry (with its link's ifindex) or nullopt for one rdmanet
// does not manage.
template <typename Header, typename Entry>
Result<std::vector<Entry>> linkEntries(
    nl_sock* sock, int ifindex, uint16_t get, uint16_t reply,
    Result<std::optional<Entry>> (*parse)(std::span<const uint8_t>), const std::string& what) {
  std::vector<Entry> out;
  RDMANET_RETURN_IF_ERROR(nl::dump(
      sock,
      [get] {
        Header hdr{};
        return nl::newMsg(get, NLM_F_DUMP, &hdr, sizeof(hdr));
      },
      [&] { out.clear(); },
      [&](const nlmsghdr& h, std::span<const uint8_t> p) -> Status {
        if (h.nlmsg_type != reply) return okStatus();
        RDMANET_ASSIGN_OR_RETURN(std::optional<Entry> e, parse(p));
        if (e && e->ifindex == ifindex) out.push_back(std::move(*e));
        return okStatus();
      },
      what));
  return out;
}

Result<std::optional<AddrEntry>> parseAnyAddr(std::span<const uint8_t> payload) {
  RDMANET_ASSIGN_OR_RETURN(AddrEntry e, parseAddrMessage(payload));
  return std::optional<AddrEntry>(e);
}

std::string routeName(const Route& r) {
  return "route " + r.dst.str() + (r.gateway ? " via " + r.gateway->str() : std::string()) +
         " dev " + std::to_string(r.ifindex);
}

}  // namespace

Result<std::vector<IpPrefix>> LibnlNetlink::addresses(int ifindex) {
  RDMANET_ASSIGN_OR_RETURN(LinkInfo link, linkByIndex(ifindex));  // 100 for a missing link
  RDMANET_ASSIGN_OR_RETURN(auto entries,
                           linkEntries<ifaddrmsg>(sock_, link.ifindex, RTM_GETADDR, RTM_NEWADDR,
                                                  parseAnyAddr, "dumping addresses"));
  std::vector<IpPrefix> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.push_back(e.prefix);
  return out;
}

Status LibnlNetlink::addAddress(int ifindex, const IpPrefix& prefix) {
  RDMANET_RETURN_IF_ERROR(checkFamily(prefix.address));
  auto msg = addrMsg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, ifindex, prefix);
  return nl::request(sock_, msg.get(),
                     "adding " + prefix.str() + " to link " + std::to_string(ifindex));
}

Status LibnlNetlink::deleteAddress(int ifindex, const IpPrefix& prefix) {
  RDMANET_RETURN_IF_ERROR(checkFamily(prefix.address));
  auto msg = addrMsg(RTM_DELADDR, 0, ifindex, prefix);
  RDMANET_ASSIGN_OR_RETURN(nl::Outcome o,
                           nl::transact(sock_, msg.get(), nullptr, ErrorCode::kNetlinkFailure));
  // EADDRNOTAVAIL: already gone, which is what the caller wanted.
  if (o.err == 0 || o.err == EADDRNOTAVAIL) return okStatus();
  return nl::refusal(o, "deleting " + prefix.str() + " from link " + std::to_string(ifindex));
}

Result<std::vector<Route>> LibnlNetlink::routes(int ifindex) {
  RDMANET_ASSIGN_OR_RETURN(LinkInfo link, linkByIndex(ifindex));
  return linkEntries<rtmsg>(sock_, link.ifindex, RTM_GETROUTE, RTM_NEWROUTE, parseRouteMessage,
                            "dumping routes");
}

Status LibnlNetlink::addRoute(const Route& route) {
  RDMANET_RETURN_IF_ERROR(checkRoute(route));
  auto msg = routeMsg(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, route);
  return nl::request(sock_, msg.get(), "adding " + routeName(route));
}

Status LibnlNetlink::deleteRoute(const Route& route) {
  RDMANET_RETURN_IF_ERROR(checkRoute(route));
  auto msg = routeMsg(RTM_DELROUTE, 0, route);
  RDMANET_ASSIGN_OR_RETURN(nl::Outcome o,
                           nl::transact(sock_, msg.get(), nullptr, ErrorCode::kNetlinkFailure));
  // ESRCH: no such route. ENODEV: its device is gone, and the kernel took the route with it.
  if (o.err == 0 || o.err == ESRCH || o.err == ENODEV) return okStatus();
  return nl::refusal(o, "deleting " + routeName(route));
}

}  // namespace rdmanet
