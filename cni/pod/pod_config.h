#pragma once
// Inside the pod: bring CNI_IFNAME up with the IPAM result's addresses and routes, and check
// them later (CHECK).

#include <optional>
#include <string>

#include "cni/conf/result_types.h"
#include "common/base/mac_address.h"
#include "common/base/result.h"
#include "common/net/netlink.h"

namespace rdmanet::cni {

// Sets the link up, adds every address, then every route (a route without "gw" goes through the
// gateway of the first address of its family, as the reference plugins do; without one it is a
// direct route). Returns the link as it is afterwards.
Result<LinkInfo> configurePod(Netlink& nl, const std::string& ifname, const CniResult& ipam);

struct PodExpectation {
  std::string ifname{};
  std::optional<MacAddress> mac{};
  std::optional<uint32_t> mtu{};
  CniResult ips{};  // addresses and routes that must be present (extra ones are allowed)
};
// Error 100 when the link is missing, 7 naming the first difference otherwise.
Status checkPod(Netlink& nl, const PodExpectation& want);

}  // namespace rdmanet::cni
