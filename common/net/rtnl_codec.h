#pragma once
// Pure decoders for rtnetlink replies: payload bytes (after struct nlmsghdr) -> domain structs.
//
// Kept apart from LibnlNetlink so the parts the host kernel cannot exercise (IFLA_VFINFO_LIST
// of an SR-IOV PF) are unit-tested with hand-built bytes. Every decoder is bounds-checked:
// malformed input yields error 101 (kNetlinkFailure), never a crash.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/base/result.h"
#include "common/net/ip.h"
#include "common/net/netlink.h"

namespace rdmanet {

// RTM_NEWLINK payload (struct ifinfomsg + IFLA_* attributes).
Result<LinkInfo> parseLinkMessage(std::span<const uint8_t> payload);

// The VFs of an RTM_NEWLINK payload requested with IFLA_EXT_MASK = RTEXT_FILTER_VF. A link
// without IFLA_VFINFO_LIST yields an empty list. Sorted by VF index.
Result<std::vector<VfInfo>> parseVfInfoList(std::span<const uint8_t> payload);

// RTM_NEWADDR payload. Also returns the ifindex the address belongs to.
struct AddrEntry {
  int ifindex = 0;
  IpPrefix prefix;
};
Result<AddrEntry> parseAddrMessage(std::span<const uint8_t> payload);

// RTM_NEWROUTE payload. nullopt for routes rdmanet does not manage (not in the main table, not
// unicast, or multipath without RTA_OIF).
Result<std::optional<Route>> parseRouteMessage(std::span<const uint8_t> payload);

// RTM_NEWQDISC payload (struct tcmsg + TCA_* attributes): the rate in bytes/s of the root TBF of
// link `ifindex` it describes, from TCA_TBF_RATE64 when present (a rate above 2^32-1 bytes/s),
// else from TCA_TBF_PARMS. nullopt when it is about another qdisc or link, or lacks the options
// (or they are cut short) that hold the rate.
std::optional<uint64_t> parseRootTbfRate(std::span<const uint8_t> payload, int ifindex);

// "up", "down", ... for an IF_OPER_* value (RFC 2863 names as `ip link` prints them).
const char* operstateName(uint8_t oper);

}  // namespace rdmanet
