#include "common/net/rtnl_codec.h"

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "common/net/nlattr_view.h"

namespace rdmanet {
namespace {

Error malformed(const char* what) {
  return makeError(ErrorCode::kNetlinkFailure, std::string("malformed ") + what + " message");
}

template <typename Hdr>
std::optional<std::span<const uint8_t>> attrsAfter(std::span<const uint8_t> payload) {
  constexpr size_t hdr = (sizeof(Hdr) + 3) & ~size_t{3};  // NLMSG_ALIGN
  if (payload.size() < sizeof(Hdr)) return std::nullopt;
  return payload.size() <= hdr ? std::span<const uint8_t>() : payload.subspan(hdr);
}

std::optional<IpAddress> ipFrom(const nlattr::Attr& a, int family) {
  IpAddress ip;
  const size_t n = family == AF_INET ? 4 : 16;
  if ((family != AF_INET && family != AF_INET6) || a.payload.size() < n) return std::nullopt;
  ip.family = family;
  std::copy_n(a.payload.begin(), n, ip.bytes.begin());
  return ip;
}

// Folds one IFLA_VF_INFO nest into `vfs` (keyed by the VF number carried in every struct).
// IFLA_VF_STATS: a nest of u64 counters. It carries no VF number of its own: it belongs to the
// VF the other attributes of the same IFLA_VF_INFO name.
//
// A nest of zeros only is no reading: the kernel puts IFLA_VF_STATS in every dump, zeroed, and
// asks the driver to fill it only when the driver counts per VF (ndo_get_vf_stats: mlx5, ice).
// igb does not, and its VFs read 0 whatever they carried (measured in the VM cluster: a VF that
// had moved thousands of frames read all zeros). A VF that has carried anything counts at least
// one packet, so all zeros from a counting driver means only "nothing yet", which is no loss.
// False when the nest is malformed; `out` is the reading, or nullopt for zeros only.
bool parseVfStats(std::span<const uint8_t> nest, std::optional<VfTraffic>& out) {
  VfTraffic t;
  bool any = false;
  nlattr::Walker w(nest);
  while (auto a = w.next()) {
    const uint64_t v = a->as<uint64_t>().value_or(0);
    any = any || v != 0;
    switch (a->type) {
      case IFLA_VF_STATS_RX_PACKETS:
        t.rx_packets = v;
        break;
      case IFLA_VF_STATS_TX_PACKETS:
        t.tx_packets = v;
        break;
      case IFLA_VF_STATS_RX_BYTES:
        t.rx_bytes = v;
        break;
      case IFLA_VF_STATS_TX_BYTES:
        t.tx_bytes = v;
        break;
      case IFLA_VF_STATS_RX_DROPPED:
        t.rx_dropped = v;
        break;
      case IFLA_VF_STATS_TX_DROPPED:
        t.tx_dropped = v;
        break;
      default:
        break;  // broadcast, multicast, padding
    }
  }
  if (w.malformed()) return false;
  out = any ? std::optional<VfTraffic>(t) : std::nullopt;
  return true;
}

bool parseVfInfo(std::span<const uint8_t> nest, std::map<uint32_t, VfInfo>& vfs) {
  nlattr::Walker w(nest);
  std::optional<uint32_t> index;  // the VF this nest describes, from any attribute naming it
  std::optional<VfTraffic> traffic;
  auto vf = [&](uint32_t idx) -> VfInfo& {
    VfInfo& v = vfs[idx];
    v.index = static_cast<int>(idx);
    index = idx;
    return v;
  };
  while (auto a = w.next()) {
    switch (a->type) {
      case IFLA_VF_MAC:
        if (auto m = a->as<ifla_vf_mac>()) std::copy_n(m->mac, 6, vf(m->vf).mac.bytes.begin());
        break;
      case IFLA_VF_VLAN:
        if (auto v = a->as<ifla_vf_vlan>()) {
          vf(v->vf).vlan = static_cast<uint16_t>(v->vlan);
          vf(v->vf).qos = static_cast<uint8_t>(v->qos);
        }
        break;
      case IFLA_VF_VLAN_LIST: {
        // The 802.1ad-capable form; first entry wins (the kernel reports exactly one).
        nlattr::Walker lw(a->payload);
        if (auto e = lw.next()) {
          if (auto v = e->as<ifla_vf_vlan_info>()) {
            VfInfo& info = vf(v->vf);
            info.vlan = static_cast<uint16_t>(v->vlan);
            info.qos = static_cast<uint8_t>(v->qos);
            info.vlan_proto = ntohs(v->vlan_proto);
          }
        }
        if (lw.malformed()) return false;
        break;
      }
      case IFLA_VF_SPOOFCHK:
        if (auto v = a->as<ifla_vf_spoofchk>()) vf(v->vf).spoofchk = v->setting != 0;
        break;
      case IFLA_VF_TRUST:
        if (auto v = a->as<ifla_vf_trust>()) vf(v->vf).trust = v->setting != 0;
        break;
      case IFLA_VF_LINK_STATE:
        if (auto v = a->as<ifla_vf_link_state>()) {
          vf(v->vf).link_state = static_cast<VfLinkState>(std::min<uint32_t>(v->link_state, 2));
        }
        break;
      case IFLA_VF_RATE:
        if (auto v = a->as<ifla_vf_rate>()) {
          vf(v->vf).min_tx_rate = v->min_tx_rate;
          vf(v->vf).max_tx_rate = v->max_tx_rate;
        }
        break;
      case IFLA_VF_STATS:
        if (!parseVfStats(a->payload, traffic)) return false;
        break;
      default:
        break;  // IFLA_VF_TX_RATE (superseded by IFLA_VF_RATE), GUIDs, ...
    }
  }
  if (traffic && index) vfs[*index].traffic = traffic;
  return !w.malformed();
}

}  // namespace

std::optional<uint64_t> parseRootTbfRate(std::span<const uint8_t> payload, int ifindex) {
  const auto attrs = attrsAfter<tcmsg>(payload);
  if (!attrs) return std::nullopt;
  tcmsg tcm{};
  std::memcpy(&tcm, payload.data(), sizeof(tcm));
  if (tcm.tcm_ifindex != ifindex || tcm.tcm_parent != TC_H_ROOT) return std::nullopt;
  const auto kind = nlattr::find(*attrs, TCA_KIND);
  if (!kind || kind->str() != "tbf") return std::nullopt;
  const auto options = nlattr::find(*attrs, TCA_OPTIONS);
  if (!options) return std::nullopt;
  if (const auto rate64 = nlattr::find(options->payload, TCA_TBF_RATE64)) {
    if (const auto v = rate64->as<uint64_t>()) return v;
  }
  const auto parms = nlattr::find(options->payload, TCA_TBF_PARMS);
  if (!parms) return std::nullopt;
  const auto qopt = parms->as<tc_tbf_qopt>();
  if (!qopt) return std::nullopt;
  return qopt->rate.rate;
}

const char* operstateName(uint8_t oper) {
  static constexpr const char* kNames[] = {"unknown", "notpresent", "down", "lowerlayerdown",
                                           "testing", "dormant",    "up"};
  return oper < std::size(kNames) ? kNames[oper] : "unknown";
}

Result<LinkInfo> parseLinkMessage(std::span<const uint8_t> payload) {
  auto attrs = attrsAfter<ifinfomsg>(payload);
  if (!attrs) return malformed("link");
  ifinfomsg ifi;
  std::memcpy(&ifi, payload.data(), sizeof(ifi));
  LinkInfo link;
  link.ifindex = ifi.ifi_index;
  link.admin_up = (ifi.ifi_flags & IFF_UP) != 0;
  link.carrier = (ifi.ifi_flags & IFF_LOWER_UP) != 0;
  link.operstate = "unknown";
  nlattr::Walker w(*attrs);
  while (auto a = w.next()) {
    switch (a->type) {
      case IFLA_IFNAME:
        link.name = a->str();
        break;
      case IFLA_ADDRESS:
        // Only Ethernet-sized addresses; IPoIB's 20-byte hardware address does not fit a MAC.
        if (a->payload.size() == ETH_ALEN) {
          std::copy_n(a->payload.begin(), ETH_ALEN, link.mac.bytes.begin());
        }
        break;
      case IFLA_PERM_ADDRESS:
        if (a->payload.size() == ETH_ALEN) {
          std::copy_n(a->payload.begin(), ETH_ALEN, link.perm_mac.bytes.begin());
        }
        break;
      case IFLA_MTU:
        if (auto v = a->as<uint32_t>()) link.mtu = *v;
        break;
      case IFLA_OPERSTATE:
        if (auto v = a->as<uint8_t>()) link.operstate = operstateName(*v);
        break;
      case IFLA_LINK:
        if (auto v = a->as<uint32_t>()) link.parent_ifindex = static_cast<int>(*v);
        break;
      case IFLA_NUM_VF:
        if (auto v = a->as<uint32_t>()) link.num_vfs = static_cast<int>(*v);
        break;
      case IFLA_PARENT_DEV_NAME:
        link.parent_dev = a->str();
        break;
      case IFLA_LINKINFO:
        if (auto kind = nlattr::find(a->payload, IFLA_INFO_KIND)) link.kind = kind->str();
        break;
      default:
        break;
    }
  }
  if (w.malformed()) return malformed("link");
  if (link.name.empty()) return malformed("link (no IFLA_IFNAME)");
  return link;
}

Result<std::vector<VfInfo>> parseVfInfoList(std::span<const uint8_t> payload) {
  auto attrs = attrsAfter<ifinfomsg>(payload);
  if (!attrs || !nlattr::wellFormed(*attrs)) return malformed("link");
  std::vector<VfInfo> out;
  auto list = nlattr::find(*attrs, IFLA_VFINFO_LIST);
  if (!list) return out;
  std::map<uint32_t, VfInfo> vfs;
  nlattr::Walker w(list->payload);
  while (auto info = w.next()) {
    if (info->type != IFLA_VF_INFO) continue;
    if (!parseVfInfo(info->payload, vfs)) return malformed("IFLA_VF_INFO");
  }
  if (w.malformed()) return malformed("IFLA_VFINFO_LIST");
  // SR-IOV's TotalVFs is a 16-bit field: a larger VF number is no VF (and would not fit
  // VfInfo::index without turning negative).
  if (!vfs.empty() && vfs.rbegin()->first > 0xffff) return malformed("VF number beyond 65535");
  for (auto& [idx, vf] : vfs) out.push_back(vf);
  return out;
}

Result<AddrEntry> parseAddrMessage(std::span<const uint8_t> payload) {
  auto attrs = attrsAfter<ifaddrmsg>(payload);
  if (!attrs) return malformed("address");
  ifaddrmsg ifa;
  std::memcpy(&ifa, payload.data(), sizeof(ifa));
  // IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer on point-to-point links
  // (and the only one present for IPv6).
  auto attr = nlattr::find(*attrs, IFA_LOCAL);
  if (!attr) attr = nlattr::find(*attrs, IFA_ADDRESS);
  if (!attr || !nlattr::wellFormed(*attrs)) return malformed("address");
  auto ip = ipFrom(*attr, ifa.ifa_family);
  if (!ip) return malformed("address");
  return AddrEntry{.ifindex = static_cast<int>(ifa.ifa_index),
                   .prefix = IpPrefix{.address = *ip, .prefix_len = ifa.ifa_prefixlen}};
}

Result<std::optional<Route>> parseRouteMessage(std::span<const uint8_t> payload) {
  auto attrs = attrsAfter<rtmsg>(payload);
  if (!attrs || !nlattr::wellFormed(*attrs)) return malformed("route");
  rtmsg rtm;
  std::memcpy(&rtm, payload.data(), sizeof(rtm));
  uint32_t table = rtm.rtm_table;
  if (auto t = nlattr::find(*attrs, RTA_TABLE)) table = t->as<uint32_t>().value_or(table);
  if (table != RT_TABLE_MAIN || rtm.rtm_type != RTN_UNICAST) return std::optional<Route>();
  if (rtm.rtm_family != AF_INET && rtm.rtm_family != AF_INET6) return std::optional<Route>();
  Route r;
  r.dst.address.family = rtm.rtm_family;
  r.dst.prefix_len = rtm.rtm_dst_len;
  if (auto dst = nlattr::find(*attrs, RTA_DST)) {
    auto ip = ipFrom(*dst, rtm.rtm_family);
    if (!ip) return malformed("route");
    r.dst.address = *ip;
  }
  if (auto gw = nlattr::find(*attrs, RTA_GATEWAY)) {
    r.gateway = ipFrom(*gw, rtm.rtm_family);
    if (!r.gateway) return malformed("route");
  }
  auto oif = nlattr::find(*attrs, RTA_OIF);
  if (!oif) return std::optional<Route>();
  r.ifindex = static_cast<int>(oif->as<uint32_t>().value_or(0));
  return std::optional<Route>(r);
}

}  // namespace rdmanet
