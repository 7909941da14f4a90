#include "common/net/lldp_socket.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>

namespace rdmanet {
namespace {

// An LLDPDU fits a standard frame; anything longer is cut and fails to parse, as it should.
constexpr size_t kMaxFrame = 1518;
// A drain reads what is queued, but at most this many frames per call, so that a flood on one
// port cannot hold the daemon's loop.
constexpr int kMaxFramesPerDrain = 256;

int membership(int fd, int ifindex, int op) {
  packet_mreq mr{};
  mr.mr_ifindex = ifindex;
  mr.mr_type = PACKET_MR_MULTICAST;
  mr.mr_alen = sizeof kLldpMulticast;
  std::memcpy(mr.mr_address, kLldpMulticast, sizeof kLldpMulticast);
  return ::setsockopt(fd, SOL_PACKET, op, &mr, sizeof mr);
}

}  // namespace

Result<LldpSocket> LldpSocket::open() {
  int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(kEthPLldp));
  if (fd < 0) return errnoError(ErrorCode::kNetlinkFailure, errno, "AF_PACKET socket for LLDP");
  return LldpSocket(Fd(fd));
}

std::map<std::string, std::string> LldpSocket::listen(const std::set<std::string>& netdevs) {
  std::map<std::string, std::string> failed;
  for (auto it = joined_.begin(); it != joined_.end();) {
    const unsigned now = ::if_nametoindex(it->first.c_str());
    if (netdevs.contains(it->first) && static_cast<int>(now) == it->second) {
      ++it;
      continue;
    }
    // Gone, renamed or made again: leaving fails harmlessly when the ifindex no longer exists.
    (void)membership(fd_.get(), it->second, PACKET_DROP_MEMBERSHIP);
    it = joined_.erase(it);
  }
  for (const std::string& name : netdevs) {
    if (joined_.contains(name)) continue;
    const unsigned ifindex = ::if_nametoindex(name.c_str());
    if (ifindex == 0) {
      failed[name] = "no such netdev";
      continue;
    }
    if (membership(fd_.get(), static_cast<int>(ifindex), PACKET_ADD_MEMBERSHIP) != 0) {
      failed[name] = fmt::format("joining the LLDP group: {}", std::strerror(errno));
      continue;
    }
    joined_[name] = static_cast<int>(ifindex);
  }
  return failed;
}

std::vector<LldpReceived> LldpSocket::drain() {
  std::vector<LldpReceived> out;
  uint8_t buf[kMaxFrame];
  for (int i = 0; i < kMaxFramesPerDrain; ++i) {
    sockaddr_ll from{};
    socklen_t len = sizeof from;
    const ssize_t n =
        ::recvfrom(fd_.get(), buf, sizeof buf, MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) break;  // EAGAIN: drained (any other error: the next poll says so again)
    if (from.sll_pkttype == PACKET_OUTGOING) continue;  // our own host's lldpd, if any
    auto it = std::find_if(joined_.begin(), joined_.end(),
                           [&](const auto& j) { return j.second == from.sll_ifindex; });
    if (it == joined_.end()) continue;
    const size_t got = std::min(static_cast<size_t>(n), sizeof buf);
    out.push_back({.netdev = it->first,
                   .neighbor = static_cast<size_t>(n) > sizeof buf
                                   ? Result<LldpNeighbor>(makeError(
                                         ErrorCode::kDecodeFailure,
                                         fmt::format("LLDPDU of {} bytes, longer than a frame", n)))
                                   : parseLldpdu(std::span<const uint8_t>(buf, got))});
  }
  return out;
}

}  // namespace rdmanet
