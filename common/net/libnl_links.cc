// LibnlNetlink: construction and link operations (lookup, dump, set, create, delete).
#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>

#include <utility>

#include "common/net/libnl_netlink.h"
#include "common/net/libnl_socket.h"
#include "common/net/rtnl_codec.h"

namespace rdmanet {
namespace {

std::string idx(int ifindex) { return "link " + std::to_string(ifindex); }

nl::MsgPtr linkMsg(int type, int flags, int ifindex, unsigned flags_set = 0,
                   unsigned flags_change = 0) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  ifi.ifi_flags = flags_set;
  ifi.ifi_change = flags_change;
  return nl::newMsg(type, flags, &ifi, sizeof(ifi));
}

// Reads the single RTM_NEWLINK answer to a GETLINK request.
Result<LinkInfo> getLink(nl_sock* sock, nl::MsgPtr msg, const std::string& what) {
  RDMANET_ASSIGN_OR_RETURN(
      auto a, nl::transactOne<LinkInfo>(sock, msg.get(), RTM_NEWLINK, parseLinkMessage));
  return nl::theReply(std::move(a), what);
}

Status putMode(nl_msg* msg, MacvlanMode mode) {
  uint32_t m = MACVLAN_MODE_BRIDGE;
  switch (mode) {
    case MacvlanMode::kPrivate:
      m = MACVLAN_MODE_PRIVATE;
      break;
    case MacvlanMode::kVepa:
      m = MACVLAN_MODE_VEPA;
      break;
    case MacvlanMode::kBridge:
      m = MACVLAN_MODE_BRIDGE;
      break;
    case MacvlanMode::kPassthru:
      m = MACVLAN_MODE_PASSTHRU;
      break;
  }
  nla_put_u32(msg, IFLA_MACVLAN_MODE, m);
  return okStatus();
}

bool validName(const std::string& name) {
  return !name.empty() && name.size() < IFNAMSIZ && name != "." && name != ".." &&
         name.find_first_of("/: \t\n") == std::string::npos;
}

Error badName(const std::string& name) {
  return errnoError(ErrorCode::kNetlinkFailure, EINVAL, "invalid interface name \"" + name + "\"");
}

}  // namespace

Result<std::unique_ptr<LibnlNetlink>> LibnlNetlink::open() {
  RDMANET_ASSIGN_OR_RETURN(nl::SockPtr sock,
                           nl::connect(NETLINK_ROUTE, ErrorCode::kNetlinkFailure));
  return std::unique_ptr<LibnlNetlink>(new LibnlNetlink(sock.release()));
}

LibnlNetlink::LibnlNetlink(LibnlNetlink&& o) noexcept : sock_(std::exchange(o.sock_, nullptr)) {}

LibnlNetlink& LibnlNetlink::operator=(LibnlNetlink&& o) noexcept {
  if (this != &o) {
    if (sock_) nl_socket_free(sock_);
    sock_ = std::exchange(o.sock_, nullptr);
  }
  return *this;
}

LibnlNetlink::~LibnlNetlink() {
  if (sock_) nl_socket_free(sock_);
}

Result<LinkInfo> LibnlNetlink::linkByName(const std::string& name) {
  if (!validName(name)) return badName(name);
  auto msg = linkMsg(RTM_GETLINK, 0, 0);
  nla_put_string(msg.get(), IFLA_IFNAME, name.c_str());
  return getLink(sock_, std::move(msg), "link \"" + name + "\"");
}

Result<LinkInfo> LibnlNetlink::linkByIndex(int ifindex) {
  if (ifindex <= 0) return errnoError(ErrorCode::kDeviceNotFound, ENODEV, idx(ifindex));
  return getLink(sock_, linkMsg(RTM_GETLINK, 0, ifindex), idx(ifindex));
}

Result<std::vector<LinkInfo>> LibnlNetlink::links() {
  std::vector<LinkInfo> out;
  RDMANET_RETURN_IF_ERROR(nl::dump(
      sock_, [] { return linkMsg(RTM_GETLINK, NLM_F_DUMP, 0); }, [&] { out.clear(); },
      [&](const nlmsghdr& h, std::span<const uint8_t> p) -> Status {
        if (h.nlmsg_type != RTM_NEWLINK) return okStatus();
        RDMANET_ASSIGN_OR_RETURN(LinkInfo l, parseLinkMessage(p));
        out.push_back(std::move(l));
        return okStatus();
      },
      "dumping links"));
  return out;
}

Status LibnlNetlink::setUp(int ifindex, bool up) {
  auto msg = linkMsg(RTM_SETLINK, 0, ifindex, up ? IFF_UP : 0, IFF_UP);
  return nl::request(sock_, msg.get(),
                     std::string(up ? "setting up " : "setting down ") + idx(ifindex));
}

Status LibnlNetlink::rename(int ifindex, const std::string& name) {
  if (!validName(name)) return badName(name);
  auto msg = linkMsg(RTM_SETLINK, 0, ifindex);
  nla_put_string(msg.get(), IFLA_IFNAME, name.c_str());
  return nl::request(sock_, msg.get(), "renaming " + idx(ifindex) + " to \"" + name + "\"");
}

Status LibnlNetlink::setMtu(int ifindex, uint32_t mtu) {
  auto msg = linkMsg(RTM_SETLINK, 0, ifindex);
  nla_put_u32(msg.get(), IFLA_MTU, mtu);
  return nl::request(sock_, msg.get(),
                     "setting MTU " + std::to_string(mtu) + " on " + idx(ifindex));
}

Status LibnlNetlink::setMac(int ifindex, const MacAddress& mac) {
  auto msg = linkMsg(RTM_SETLINK, 0, ifindex);
  nla_put(msg.get(), IFLA_ADDRESS, 6, mac.bytes.data());
  return nl::request(sock_, msg.get(), "setting MAC " + mac.str() + " on " + idx(ifindex));
}

Status LibnlNetlink::moveToNetns(int ifindex, int netns_fd) {
  auto msg = linkMsg(RTM_SETLINK, 0, ifindex);
  nla_put_u32(msg.get(), IFLA_NET_NS_FD, static_cast<uint32_t>(netns_fd));
  return nl::request(sock_, msg.get(), "moving " + idx(ifindex) + " to another netns");
}

Result<int> LibnlNetlink::addMacvlan(const MacvlanSpec& spec) {
  if (!validName(spec.name)) return badName(spec.name);
  auto msg = linkMsg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0);
  nl_msg* m = msg.get();
  nla_put_string(m, IFLA_IFNAME, spec.name.c_str());
  // IFLA_LINK is resolved in the requesting namespace even when the new link is created in
  // another one (IFLA_NET_NS_FD), which is what lets us create the macvlan straight in the pod.
  nla_put_u32(m, IFLA_LINK, static_cast<uint32_t>(spec.master_ifindex));
  if (spec.mtu > 0) nla_put_u32(m, IFLA_MTU, spec.mtu);
  if (spec.mac) nla_put(m, IFLA_ADDRESS, 6, spec.mac->bytes.data());
  if (spec.netns_fd >= 0) nla_put_u32(m, IFLA_NET_NS_FD, static_cast<uint32_t>(spec.netns_fd));
  nlattr* info = nla_nest_start(m, IFLA_LINKINFO);
  nla_put_string(m, IFLA_INFO_KIND, "macvlan");
  nlattr* data = nla_nest_start(m, IFLA_INFO_DATA);
  RDMANET_RETURN_IF_ERROR(putMode(m, spec.mode));
  nla_nest_end(m, data);
  nla_nest_end(m, info);
  RDMANET_RETURN_IF_ERROR(nl::request(
      sock_, m, "creating macvlan \"" + spec.name + "\" on " + idx(spec.master_ifindex)));
  if (spec.netns_fd >= 0) return 0;
  RDMANET_ASSIGN_OR_RETURN(LinkInfo l, linkByName(spec.name));
  return l.ifindex;
}

Result<int> LibnlNetlink::addVlan(const VlanSpec& spec) {
  if (!validName(spec.name)) return badName(spec.name);
  if (spec.vlan_id == 0 || spec.vlan_id > 4094) {
    return errnoError(ErrorCode::kNetlinkFailure, EINVAL,
                      "VLAN id " + std::to_string(spec.vlan_id) + " out of range 1..4094");
  }
  auto msg = linkMsg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0);
  nl_msg* m = msg.get();
  nla_put_string(m, IFLA_IFNAME, spec.name.c_str());
  nla_put_u32(m, IFLA_LINK, static_cast<uint32_t>(spec.link_ifindex));
  if (spec.mtu > 0) nla_put_u32(m, IFLA_MTU, spec.mtu);
  if (spec.netns_fd >= 0) nla_put_u32(m, IFLA_NET_NS_FD, static_cast<uint32_t>(spec.netns_fd));
  nlattr* info = nla_nest_start(m, IFLA_LINKINFO);
  nla_put_string(m, IFLA_INFO_KIND, "vlan");
  nlattr* data = nla_nest_start(m, IFLA_INFO_DATA);
  nla_put_u16(m, IFLA_VLAN_ID, spec.vlan_id);
  nla_put_u16(m, IFLA_VLAN_PROTOCOL, htons(spec.proto));  // __be16 on the wire
  if (!spec.egress_qos.empty()) {
    nlattr* qos = nla_nest_start(m, IFLA_VLAN_EGRESS_QOS);
    for (const auto& [from, to] : spec.egress_qos) {
      ifla_vlan_qos_mapping map{.from = from, .to = to};
      nla_put(m, IFLA_VLAN_QOS_MAPPING, sizeof(map), &map);
    }
    nla_nest_end(m, qos);
  }
  nla_nest_end(m, data);
  nla_nest_end(m, info);
  RDMANET_RETURN_IF_ERROR(
      nl::request(sock_, m, "creating vlan \"" + spec.name + "\" on " + idx(spec.link_ifindex)));
  if (spec.netns_fd >= 0) return 0;
  RDMANET_ASSIGN_OR_RETURN(LinkInfo l, linkByName(spec.name));
  return l.ifindex;
}

Status LibnlNetlink::deleteLink(int ifindex) {
  auto msg = linkMsg(RTM_DELLINK, 0, ifindex);
  return nl::request(sock_, msg.get(), "deleting " + idx(ifindex));
}

}  // namespace rdmanet
