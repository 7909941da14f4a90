#pragma once
// LibnlNetlink: the production Netlink, over libnl-3's socket and message API.
//
// Requests are built with libnl's core message API (nlmsg_alloc_simple, nla_put, nla_nest_*)
// and acknowledged explicitly, so failures carry the kernel's real errno (read from the
// NLMSG_ERROR ack, plus the extended-ack text when the kernel gives one) rather than libnl's
// lossy NLE_* translation. Replies are decoded by rtnl_codec / parseDcbReply.
//
// One instance = one NETLINK_ROUTE socket = the network namespace it was opened in. Move-only;
// not thread-safe. RDMA operations open a short-lived NETLINK_RDMA socket in the same
// namespace (the calling thread's, so they must be called where the instance was opened).

#include <memory>
#include <string>
#include <vector>

#include "common/net/netlink.h"

struct nl_sock;

namespace rdmanet {

class LibnlNetlink : public Netlink {
 public:
  // Opens a NETLINK_ROUTE socket in the calling thread's current network namespace.
  static Result<std::unique_ptr<LibnlNetlink>> open();

  LibnlNetlink(LibnlNetlink&& o) noexcept;
  LibnlNetlink& operator=(LibnlNetlink&& o) noexcept;
  LibnlNetlink(const LibnlNetlink&) = delete;
  LibnlNetlink& operator=(const LibnlNetlink&) = delete;
  ~LibnlNetlink() override;

  Result<LinkInfo> linkByName(const std::string& name) override;
  Result<LinkInfo> linkByIndex(int ifindex) override;
  Result<std::vector<LinkInfo>> links() override;
  Status setUp(int ifindex, bool up) override;
  Status rename(int ifindex, const std::string& name) override;
  Status setMtu(int ifindex, uint32_t mtu) override;
  Status setMac(int ifindex, const MacAddress& mac) override;
  Status moveToNetns(int ifindex, int netns_fd) override;
  Result<int> addMacvlan(const MacvlanSpec& spec) override;
  Result<int> addVlan(const VlanSpec& spec) override;
  Status deleteLink(int ifindex) override;

  Result<std::vector<VfInfo>> vfs(int pf_ifindex) override;
  Status setVfMac(int pf_ifindex, int vf, const MacAddress& mac) override;
  Status setVfVlan(int pf_ifindex, int vf, uint16_t vlan, uint8_t qos, uint16_t proto) override;
  Status setVfSpoofchk(int pf_ifindex, int vf, bool on) override;
  Status setVfTrust(int pf_ifindex, int vf, bool on) override;
  Status setVfLinkState(int pf_ifindex, int vf, VfLinkState state) override;
  Status setVfRate(int pf_ifindex, int vf, uint32_t min_mbps, uint32_t max_mbps) override;

  Result<std::vector<IpPrefix>> addresses(int ifindex) override;
  Status addAddress(int ifindex, const IpPrefix& prefix) override;
  Status deleteAddress(int ifindex, const IpPrefix& prefix) override;
  Result<std::vector<Route>> routes(int ifindex) override;
  Status addRoute(const Route& route) override;
  Status deleteRoute(const Route& route) override;

  Status setEgressRate(int ifindex, uint32_t mbps) override;
  Result<std::optional<uint64_t>> egressRate(int ifindex) override;
  Result<DcbState> dcb(const std::string& ifname) override;

  Result<RdmaNetnsMode> rdmaNetnsMode() override;
  Status moveRdmaToNetns(const std::string& rdma_dev, int netns_fd) override;
  Result<std::vector<RdmaLink>> rdmaLinks() override;

 private:
  explicit LibnlNetlink(nl_sock* sock) : sock_(sock) {}
  nl_sock* sock_ = nullptr;
};

}  // namespace rdmanet
