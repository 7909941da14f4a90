#include "common/net/link_monitor.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "common/net/libnl_socket.h"
#include "common/net/rtnl_codec.h"

namespace rdmanet {
namespace {

class NetlinkLinkMonitor : public LinkMonitor {
 public:
  explicit NetlinkLinkMonitor(nl::SockPtr sock) : sock_(std::move(sock)), buf_(1 << 16) {}

  int fd() const override { return nl_socket_get_fd(sock_.get()); }

  Status drain(const Callback& cb) override {
    for (;;) {
      const ssize_t n = ::recv(fd(), buf_.data(), buf_.size(), MSG_DONTWAIT | MSG_TRUNC);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return okStatus();
        if (errno == ENOBUFS) {
          // The kernel dropped notifications; the socket keeps working.
          resync_ = true;
          continue;
        }
        return errnoError(ErrorCode::kNetlinkFailure, errno, "reading link notifications");
      }
      if (static_cast<size_t>(n) > buf_.size()) {
        // A datagram larger than our buffer was cut: we lost part of its events.
        resync_ = true;
        continue;
      }
      // Walks the datagram by hand: NLMSG_OK/NLMSG_NEXT mix signed and unsigned lengths, which
      // clang's -Wsign-compare rejects.
      const size_t total = static_cast<size_t>(n);
      for (size_t off = 0, next = 0; off + sizeof(nlmsghdr) <= total; off = next) {
        const auto* h = reinterpret_cast<const nlmsghdr*>(buf_.data() + off);
        if (h->nlmsg_len < sizeof(nlmsghdr) || h->nlmsg_len > total - off) break;
        next = off + NLMSG_ALIGN(h->nlmsg_len);
        if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK) continue;
        const std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(NLMSG_DATA(h)),
                                               h->nlmsg_len - NLMSG_HDRLEN);
        auto link = parseLinkMessage(payload);
        if (!link.ok()) {
          resync_ = true;  // could not decode: the caller must not trust its view
          continue;
        }
        cb(*link, h->nlmsg_type == RTM_DELLINK);
      }
    }
  }

  bool takeResync() override { return std::exchange(resync_, false); }

 private:
  nl::SockPtr sock_;
  std::vector<uint8_t> buf_;
  bool resync_ = false;
};

}  // namespace

Result<std::unique_ptr<LinkMonitor>> LinkMonitor::open() {
  RDMANET_ASSIGN_OR_RETURN(nl::SockPtr sock,
                           nl::connect(NETLINK_ROUTE, ErrorCode::kNetlinkFailure));
  // Notifications carry the kernel's own sequence numbers.
  nl_socket_disable_seq_check(sock.get());
  int rc = nl_socket_add_membership(sock.get(), RTNLGRP_LINK);
  if (rc < 0) {
    return errnoError(ErrorCode::kNetlinkFailure, nl::nleToErrno(rc), "joining RTNLGRP_LINK");
  }
  rc = nl_socket_set_nonblocking(sock.get());
  if (rc < 0) {
    return errnoError(ErrorCode::kNetlinkFailure, nl::nleToErrno(rc), "making monitor nonblocking");
  }
  // A larger buffer makes overflow (and the resync it forces) rare when many VFs flap at once.
  (void)nl_socket_set_buffer_size(sock.get(), 1 << 20, 0);
  return std::unique_ptr<LinkMonitor>(new NetlinkLinkMonitor(std::move(sock)));
}

}  // namespace rdmanet
