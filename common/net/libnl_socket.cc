#include "common/net/libnl_socket.h"

#include <linux/netlink.h>
#include <netlink/errno.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/net/nlattr_view.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace rdmanet::nl {
namespace {

// Frees nl_recv's buffer.
struct BufDeleter {
  void operator()(unsigned char* p) const { std::free(p); }
};

std::string extAckMessage(const nlmsghdr& hdr, std::span<const uint8_t> payload) {
  if (!(hdr.nlmsg_flags & NLM_F_ACK_TLVS) || payload.size() < sizeof(nlmsgerr)) return {};
  nlmsgerr e;
  std::memcpy(&e, payload.data(), sizeof(e));
  // Without NLM_F_CAPPED the kernel echoes our whole request before the TLVs.
  size_t off = sizeof(nlmsgerr);
  if (!(hdr.nlmsg_flags & NLM_F_CAPPED)) off += e.msg.nlmsg_len - sizeof(nlmsghdr);
  off = (off + 3) & ~size_t{3};
  if (off >= payload.size()) return {};
  auto msg = nlattr::find(payload.subspan(off), NLMSGERR_ATTR_MSG);
  return msg ? msg->str() : std::string();
}

}  // namespace

MsgPtr newMsg(int type, int flags, const void* hdr, size_t hdr_len) {
  MsgPtr msg(nlmsg_alloc_simple(type, flags));
  if (!msg) std::abort();
  if (hdr_len > 0 && nlmsg_append(msg.get(), const_cast<void*>(hdr), hdr_len, NLMSG_ALIGNTO) < 0) {
    std::abort();
  }
  return msg;
}

int nleToErrno(int nle) {
  switch (std::abs(nle)) {
    case NLE_SUCCESS:
      return 0;
    case NLE_INTR:
      return EINTR;
    case NLE_BAD_SOCK:
      return EBADF;
    case NLE_AGAIN:
      return EAGAIN;
    case NLE_NOMEM:
      return ENOMEM;
    case NLE_EXIST:
      return EEXIST;
    case NLE_INVAL:
      return EINVAL;
    case NLE_RANGE:
      return ERANGE;
    case NLE_MSGSIZE:
      return EMSGSIZE;
    case NLE_OPNOTSUPP:
      return EOPNOTSUPP;
    case NLE_AF_NOSUPPORT:
      return EAFNOSUPPORT;
    case NLE_OBJ_NOTFOUND:
    case NLE_NOATTR:
      return ENOENT;
    case NLE_MISSING_ATTR:
      return EINVAL;
    case NLE_AF_MISMATCH:
      return EAFNOSUPPORT;
    case NLE_SEQ_MISMATCH:
      return EPROTO;
    case NLE_MSG_OVERFLOW:
    case NLE_MSG_TRUNC:
      return EMSGSIZE;
    case NLE_NOADDR:
      return EADDRNOTAVAIL;
    case NLE_SRCRT_NOSUPPORT:
      return EOPNOTSUPP;
    case NLE_MSG_TOOSHORT:
      return EBADMSG;
    case NLE_MSGTYPE_NOSUPPORT:
      return EOPNOTSUPP;
    case NLE_OBJ_MISMATCH:
      return EINVAL;
    case NLE_NOCACHE:
      return ENOENT;
    case NLE_BUSY:
      return EBUSY;
    case NLE_PROTO_MISMATCH:
      return EPROTONOSUPPORT;
    case NLE_NOACCESS:
      return EACCES;
    case NLE_PERM:
      return EPERM;
    case NLE_PKTLOC_FILE:
      return ENOENT;
    case NLE_PARSE_ERR:
      return EBADMSG;
    case NLE_NODEV:
      return ENODEV;
    case NLE_IMMUTABLE:
      return EPERM;
    case NLE_DUMP_INTR:
      return EINTR;
    case NLE_ATTRSIZE:
      return ERANGE;
    default:
      return EIO;
  }
}

Result<SockPtr> connect(int protocol, ErrorCode code) {
  SockPtr sock(nl_socket_alloc());
  if (!sock) return errnoError(code, ENOMEM, "allocating a netlink socket");
  errno = 0;
  const int rc = nl_connect(sock.get(), protocol);
  if (rc < 0) {
    // nl_connect reports NLE codes; socket(2)'s errno survives it and is exact.
    const int err = errno != 0 ? errno : nleToErrno(rc);
    return errnoError(code, err,
                      "opening netlink socket (protocol " + std::to_string(protocol) + ")");
  }
  // Large replies (a PF with many VFs) must not be truncated: peek at the size first.
  nl_socket_enable_msg_peek(sock.get());
  const int fd = nl_socket_get_fd(sock.get());
  const int one = 1;
  // Extended acks give the kernel's reason text ("VF index out of range"); capped acks keep the
  // error message small. Both are optional: old kernels ignore them.
  (void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  (void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  return sock;
}

Result<Outcome> transact(nl_sock* sock, nl_msg* msg, const OnReply& on_reply, ErrorCode code) {
  nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
  const int sent = nl_send_auto(sock, msg);
  if (sent < 0) return errnoError(code, nleToErrno(sent), "sending netlink request");
  const uint32_t seq = nlmsg_hdr(msg)->nlmsg_seq;
  Outcome out;
  for (bool done = false; !done;) {
    sockaddr_nl peer{};
    unsigned char* raw = nullptr;
    const int n = nl_recv(sock, &peer, &raw, nullptr);
    std::unique_ptr<unsigned char, BufDeleter> buf(raw);
    if (n < 0) return errnoError(code, nleToErrno(n), "reading netlink reply");
    if (n == 0) return errnoError(code, EPIPE, "netlink socket closed");
    int left = n;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf.get()); nlmsg_ok(h, left);
         h = nlmsg_next(h, &left)) {
      if (h->nlmsg_seq != seq || peer.nl_pid != 0) continue;  // stale reply or not the kernel
      if (h->nlmsg_flags & NLM_F_DUMP_INTR) out.dump_intr = true;
      const std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(nlmsg_data(h)),
                                             static_cast<size_t>(nlmsg_datalen(h)));
      if (h->nlmsg_type == NLMSG_ERROR) {
        if (payload.size() < sizeof(int)) return errnoError(code, EBADMSG, "short netlink ack");
        int err = 0;
        std::memcpy(&err, payload.data(), sizeof(err));
        out.err = -err;
        out.ext_msg = extAckMessage(*h, payload);
        done = true;
        break;
      }
      if (h->nlmsg_type == NLMSG_DONE) {
        // A dump that failed part-way reports its -errno in NLMSG_DONE's payload.
        int err = 0;
        if (payload.size() >= sizeof(int)) std::memcpy(&err, payload.data(), sizeof(err));
        out.err = err < 0 ? -err : 0;
        done = true;
        break;
      }
      if (h->nlmsg_type == NLMSG_NOOP || h->nlmsg_type == NLMSG_OVERRUN) continue;
      if (on_reply) RDMANET_RETURN_IF_ERROR(on_reply(*h, payload));
    }
  }
  return out;
}

Error refusal(const Outcome& o, const std::string& what, ErrorCode code) {
  Error e = errnoError(o.err == ENODEV ? ErrorCode::kDeviceNotFound : code, o.err, what);
  if (!o.ext_msg.empty()) e.msg += " (" + o.ext_msg + ")";
  return e;
}

Status request(nl_sock* sock, nl_msg* msg, const std::string& what, ErrorCode code) {
  RDMANET_ASSIGN_OR_RETURN(Outcome o, transact(sock, msg, nullptr, code));
  if (o.err != 0) return refusal(o, what, code);
  return okStatus();
}

Status dump(nl_sock* sock, const std::function<MsgPtr()>& make, const std::function<void()>& reset,
            const OnReply& on_reply, const std::string& what, ErrorCode code) {
  for (int attempt = 0; attempt < kDumpAttempts; ++attempt) {
    reset();
    MsgPtr msg = make();
    RDMANET_ASSIGN_OR_RETURN(Outcome o, transact(sock, msg.get(), on_reply, code));
    if (o.err != 0) return refusal(o, what, code);
    if (!o.dump_intr) return okStatus();
  }
  reset();
  Error e = errnoError(ErrorCode::kTryAgainLater, EINTR,
                       what + ": dump interrupted " + std::to_string(kDumpAttempts) + " times");
  return e;
}

}  // namespace rdmanet::nl
