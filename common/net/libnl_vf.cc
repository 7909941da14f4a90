// LibnlNetlink: SR-IOV VF state and knobs, always addressed through the PF.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>

#include <functional>

#include "common/net/libnl_netlink.h"
#include "common/net/libnl_socket.h"
#include "common/net/rtnl_codec.h"

namespace rdmanet {
namespace {

std::string vfName(int pf, int vf) {
  return "VF " + std::to_string(vf) + " of link " + std::to_string(pf);
}

// RTM_SETLINK on the PF with IFLA_VFINFO_LIST { IFLA_VF_INFO { <put> } }: the kernel applies
// each IFLA_VF_* it finds through the driver's ndo_set_vf_* (EOPNOTSUPP when the driver lacks
// it, EINVAL for a VF index out of range).
Status setVf(nl_sock* sock, int pf, const std::function<void(nl_msg*)>& put,
             const std::string& what) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = pf;
  auto msg = nl::newMsg(RTM_SETLINK, 0, &ifi, sizeof(ifi));
  nl_msg* m = msg.get();
  nlattr* list = nla_nest_start(m, IFLA_VFINFO_LIST);
  nlattr* info = nla_nest_start(m, IFLA_VF_INFO);
  put(m);
  nla_nest_end(m, info);
  nla_nest_end(m, list);
  return nl::request(sock, m, what);
}

Error badVf(int pf, int vf) {
  return errnoError(ErrorCode::kNetlinkFailure, EINVAL, "invalid " + vfName(pf, vf));
}

// A VF's on/off switch (IFLA_VF_SPOOFCHK, IFLA_VF_TRUST): each is a `Switch` struct
// {vf, setting} under its own attribute `type`; `name` is the knob in the error message.
template <typename Switch>
Status setVfSwitch(nl_sock* sock, int pf, int vf, int type, const char* name, bool on) {
  if (vf < 0) return badVf(pf, vf);
  return setVf(
      sock, pf,
      [&](nl_msg* m) {
        Switch v{.vf = static_cast<uint32_t>(vf), .setting = on ? 1u : 0u};
        nla_put(m, type, sizeof(v), &v);
      },
      std::string("setting ") + name + (on ? " on" : " off") + " on " + vfName(pf, vf));
}

}  // namespace

Result<std::vector<VfInfo>> LibnlNetlink::vfs(int pf_ifindex) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = pf_ifindex;
  auto msg = nl::newMsg(RTM_GETLINK, 0, &ifi, sizeof(ifi));
  // Without RTEXT_FILTER_VF the kernel leaves IFLA_VFINFO_LIST out of the reply.
  nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_VF);
  const std::string what = "reading VFs of link " + std::to_string(pf_ifindex);
  RDMANET_ASSIGN_OR_RETURN(
      auto a, nl::transactOne<std::vector<VfInfo>>(sock_, msg.get(), RTM_NEWLINK, parseVfInfoList));
  return nl::theReply(std::move(a), what);
}

Status LibnlNetlink::setVfMac(int pf, int vf, const MacAddress& mac) {
  if (vf < 0) return badVf(pf, vf);
  return setVf(
      sock_, pf,
      [&](nl_msg* m) {
        ifla_vf_mac v{};
        v.vf = static_cast<uint32_t>(vf);
        std::copy(mac.bytes.begin(), mac.bytes.end(), v.mac);
        nla_put(m, IFLA_VF_MAC, sizeof(v), &v);
      },
      "setting MAC " + mac.str() + " on " + vfName(pf, vf));
}

Status LibnlNetlink::setVfVlan(int pf, int vf, uint16_t vlan, uint8_t qos, uint16_t proto) {
  if (vf < 0) return badVf(pf, vf);
  if (vlan > 4095 || qos > 7 || (proto != ETH_P_8021Q && proto != ETH_P_8021AD)) {
    return errnoError(ErrorCode::kNetlinkFailure, EINVAL,
                      "VF VLAN " + std::to_string(vlan) + " qos " + std::to_string(qos) +
                          " proto " + std::to_string(proto) + " out of range");
  }
  return setVf(
      sock_, pf,
      [&](nl_msg* m) {
        if (proto == ETH_P_8021Q) {
          // The plain form is what every SR-IOV driver implements; the list form is only
          // needed to carry 802.1ad.
          ifla_vf_vlan v{.vf = static_cast<uint32_t>(vf), .vlan = vlan, .qos = qos};
          nla_put(m, IFLA_VF_VLAN, sizeof(v), &v);
        } else {
          nlattr* lst = nla_nest_start(m, IFLA_VF_VLAN_LIST);
          ifla_vf_vlan_info v{};
          v.vf = static_cast<uint32_t>(vf);
          v.vlan = vlan;
          v.qos = qos;
          v.vlan_proto = htons(proto);
          nla_put(m, IFLA_VF_VLAN_INFO, sizeof(v), &v);
          nla_nest_end(m, lst);
        }
      },
      "setting VLAN " + std::to_string(vlan) + " on " + vfName(pf, vf));
}

Status LibnlNetlink::setVfSpoofchk(int pf, int vf, bool on) {
  return setVfSwitch<ifla_vf_spoofchk>(sock_, pf, vf, IFLA_VF_SPOOFCHK, "spoofchk", on);
}

Status LibnlNetlink::setVfTrust(int pf, int vf, bool on) {
  return setVfSwitch<ifla_vf_trust>(sock_, pf, vf, IFLA_VF_TRUST, "trust", on);
}

Status LibnlNetlink::setVfLinkState(int pf, int vf, VfLinkState state) {
  if (vf < 0) return badVf(pf, vf);
  return setVf(
      sock_, pf,
      [&](nl_msg* m) {
        ifla_vf_link_state v{.vf = static_cast<uint32_t>(vf),
                             .link_state = static_cast<uint32_t>(state)};
        nla_put(m, IFLA_VF_LINK_STATE, sizeof(v), &v);
      },
      "setting link state on " + vfName(pf, vf));
}

Status LibnlNetlink::setVfRate(int pf, int vf, uint32_t min_mbps, uint32_t max_mbps) {
  if (vf < 0) return badVf(pf, vf);
  return setVf(
      sock_, pf,
      [&](nl_msg* m) {
        ifla_vf_rate v{
            .vf = static_cast<uint32_t>(vf), .min_tx_rate = min_mbps, .max_tx_rate = max_mbps};
        nla_put(m, IFLA_VF_RATE, sizeof(v), &v);
      },
      "setting rate " + std::to_string(min_mbps) + ".." + std::to_string(max_mbps) + " Mb/s on " +
          vfName(pf, vf));
}

}  // namespace rdmanet
