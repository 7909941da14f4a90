// LibnlNetlink: RDMA netlink (NETLINK_RDMA, the nldev client): netns mode, device moves and
// the device/port/netdev links.
//
// Each call opens a short-lived NETLINK_RDMA socket in the calling thread's namespace. A kernel
// without RDMA support has no such protocol: socket(2) fails with EPROTONOSUPPORT and we return
// error 103 with that errno.
#include <netlink/attr.h>
#include <rdma/rdma_netlink.h>

#include <optional>
#include <vector>

#include "common/net/libnl_netlink.h"
#include "common/net/libnl_socket.h"
#include "common/net/rdma_hw_stats.h"
#include "common/net/rdma_nldev_codec.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

namespace rdmanet {
namespace {

constexpr int nldev(int cmd) { return RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd); }

using RdmaDev = RdmaDevEntry;

// The RDMA devices visible from the socket's namespace (RDMA_NLDEV_CMD_GET dump).
Result<std::vector<RdmaDev>> rdmaDevices(nl_sock* sock) {
  std::vector<RdmaDev> out;
  RDMANET_RETURN_IF_ERROR(nl::dump(
      sock, [] { return nl::newMsg(nldev(RDMA_NLDEV_CMD_GET), NLM_F_DUMP, nullptr, 0); },
      [&] { out.clear(); },
      [&](const nlmsghdr&, std::span<const uint8_t> p) -> Status {
        if (auto d = parseRdmaDevice(p)) out.push_back(std::move(*d));
        return okStatus();
      },
      "listing RDMA devices", ErrorCode::kRdmaFailure));
  return out;
}

// The nldev index of `name`.
Result<uint32_t> rdmaIndex(nl_sock* sock, const std::string& name) {
  RDMANET_ASSIGN_OR_RETURN(auto devs, rdmaDevices(sock));
  for (const auto& d : devs) {
    if (d.name == name) return d.index;
  }
  return errnoError(ErrorCode::kDeviceNotFound, ENODEV, "RDMA device \"" + name + "\"");
}

// The ports of one device (RDMA_NLDEV_CMD_PORT_GET dump, which the kernel only serves per
// device). The netdev attributes come only when the port's netdev is in the caller's namespace.
Status appendPorts(nl_sock* sock, const RdmaDev& dev, std::vector<RdmaLink>& out) {
  std::vector<RdmaLink> ports;
  RDMANET_RETURN_IF_ERROR(nl::dump(
      sock,
      [&] {
        auto m = nl::newMsg(nldev(RDMA_NLDEV_CMD_PORT_GET), NLM_F_DUMP, nullptr, 0);
        nla_put_u32(m.get(), RDMA_NLDEV_ATTR_DEV_INDEX, dev.index);
        return m;
      },
      [&] { ports.clear(); },
      [&](const nlmsghdr&, std::span<const uint8_t> p) -> Status {
        ports.push_back(parseRdmaPort(p, dev.name));
        return okStatus();
      },
      "listing the ports of RDMA device \"" + dev.name + "\"", ErrorCode::kRdmaFailure));
  out.insert(out.end(), ports.begin(), ports.end());
  return okStatus();
}

}  // namespace

Result<RdmaNetnsMode> LibnlNetlink::rdmaNetnsMode() {
  RDMANET_ASSIGN_OR_RETURN(nl::SockPtr sock, nl::connect(NETLINK_RDMA, ErrorCode::kRdmaFailure));
  auto msg = nl::newMsg(nldev(RDMA_NLDEV_CMD_SYS_GET), 0, nullptr, 0);
  std::optional<uint8_t> shared;
  auto on = [&](const nlmsghdr&, std::span<const uint8_t> p) -> Status {
    if (auto m = parseRdmaNetnsMode(p)) shared = m;
    return okStatus();
  };
  RDMANET_ASSIGN_OR_RETURN(nl::Outcome o,
                           nl::transact(sock.get(), msg.get(), on, ErrorCode::kRdmaFailure));
  if (o.err != 0) return nl::refusal(o, "reading RDMA netns mode", ErrorCode::kRdmaFailure);
  if (!shared) {
    return makeError(ErrorCode::kRdmaFailure, "RDMA system reply has no netns mode");
  }
  // The kernel reports ib_devices_shared_netns: 1 = shared, 0 = exclusive.
  return *shared ? RdmaNetnsMode::kShared : RdmaNetnsMode::kExclusive;
}

Status LibnlNetlink::moveRdmaToNetns(const std::string& rdma_dev, int netns_fd) {
  RDMANET_ASSIGN_OR_RETURN(nl::SockPtr sock, nl::connect(NETLINK_RDMA, ErrorCode::kRdmaFailure));
  RDMANET_ASSIGN_OR_RETURN(uint32_t index, rdmaIndex(sock.get(), rdma_dev));
  auto msg = nl::newMsg(nldev(RDMA_NLDEV_CMD_SET), 0, nullptr, 0);
  nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, index);
  nla_put_u32(msg.get(), RDMA_NLDEV_NET_NS_FD, static_cast<uint32_t>(netns_fd));
  return nl::request(sock.get(), msg.get(),
                     "moving RDMA device \"" + rdma_dev + "\" to another netns",
                     ErrorCode::kRdmaFailure);
}

Result<std::vector<RdmaLink>> LibnlNetlink::rdmaLinks() {
  RDMANET_ASSIGN_OR_RETURN(nl::SockPtr sock, nl::connect(NETLINK_RDMA, ErrorCode::kRdmaFailure));
  RDMANET_ASSIGN_OR_RETURN(auto devs, rdmaDevices(sock.get()));
  std::vector<RdmaLink> out;
  for (const auto& d : devs) {
    const Status s = appendPorts(sock.get(), d, out);
    // EINVAL/ENODEV: the device left this namespace or was removed between the two dumps.
    if (!s.ok() && s.error().sys_errno != EINVAL && s.error().sys_errno != ENODEV) return s.error();
  }
  return out;
}

Result<std::map<std::string, uint64_t>> readRdmaPortHwCounters(const std::string& device,
                                                               uint32_t port) {
  RDMANET_ASSIGN_OR_RETURN(nl::SockPtr sock, nl::connect(NETLINK_RDMA, ErrorCode::kRdmaFailure));
  RDMANET_ASSIGN_OR_RETURN(uint32_t index, rdmaIndex(sock.get(), device));
  auto msg = nl::newMsg(nldev(RDMA_NLDEV_CMD_STAT_GET), 0, nullptr, 0);
  nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, index);
  nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_PORT_INDEX, port);
  std::map<std::string, uint64_t> out;
  auto on = [&](const nlmsghdr&, std::span<const uint8_t> p) -> Status {
    auto c = parseRdmaHwCounters(p);
    out.insert(c.begin(), c.end());
    return okStatus();
  };
  RDMANET_ASSIGN_OR_RETURN(nl::Outcome o,
                           nl::transact(sock.get(), msg.get(), on, ErrorCode::kRdmaFailure));
  if (o.err != 0) {
    return nl::refusal(o, "reading the hw counters of " + device + "/" + std::to_string(port),
                       ErrorCode::kRdmaFailure);
  }
  return out;
}

}  // namespace rdmanet
