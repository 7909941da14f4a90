#pragma once
// Internal to common/net's libnl implementation: RAII over libnl objects and the one
// request/reply loop every LibnlNetlink method goes through. Not for use outside common/net.

#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "common/base/result.h"

namespace rdmanet::nl {

struct SockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};
using SockPtr = std::unique_ptr<nl_sock, SockDeleter>;

struct MsgDeleter {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
using MsgPtr = std::unique_ptr<nl_msg, MsgDeleter>;

// Allocates a message with `hdr` (ifinfomsg, rtmsg, ...) appended. Never null (aborts on OOM,
// like the rest of the C++ runtime).
MsgPtr newMsg(int type, int flags, const void* hdr, size_t hdr_len);

// Connects a socket for `protocol` (NETLINK_ROUTE, NETLINK_RDMA) with extended acks on. Returns
// the errno of socket()/bind() on failure (EPROTONOSUPPORT when the kernel lacks the family).
Result<SockPtr> connect(int protocol, ErrorCode code);

// What the kernel answered.
struct Outcome {
  int err = 0;             // 0, or the positive errno from the NLMSG_ERROR ack / NLMSG_DONE
  bool dump_intr = false;  // some reply carried NLM_F_DUMP_INTR
  std::string ext_msg;     // extended-ack message, if any
};

using OnReply = std::function<Status(const nlmsghdr& hdr, std::span<const uint8_t> payload)>;

// Sends `msg` (completing pid/seq, adding NLM_F_REQUEST|NLM_F_ACK) and reads replies for it
// until the ack or NLMSG_DONE, calling on_reply for each data message. A socket-level failure
// is returned as an Error with `code`; a kernel refusal is returned in Outcome.err.
Result<Outcome> transact(nl_sock* sock, nl_msg* msg, const OnReply& on_reply, ErrorCode code);

// A request answered by one data message (a GET): what the kernel answered, and the last reply
// of `type` parsed by `parse` (a function of the payload returning Result<T>; nullopt when no
// such reply came). A parse error ends the call with that error.
template <typename T>
struct Answer {
  Outcome outcome;
  std::optional<T> value;
};
template <typename T, typename Parse>
Result<Answer<T>> transactOne(nl_sock* sock, nl_msg* msg, uint16_t type, Parse parse,
                              ErrorCode code = ErrorCode::kNetlinkFailure) {
  Answer<T> a;
  auto on = [&](const nlmsghdr& h, std::span<const uint8_t> p) -> Status {
    if (h.nlmsg_type != type) return okStatus();
    RDMANET_ASSIGN_OR_RETURN(T v, parse(p));
    a.value = std::move(v);
    return okStatus();
  };
  RDMANET_ASSIGN_OR_RETURN(a.outcome, transact(sock, msg, on, code));
  return a;
}

// The error for a refused request: ENODEV -> 100, anything else -> `code` (101 by default).
Error refusal(const Outcome& o, const std::string& what,
              ErrorCode code = ErrorCode::kNetlinkFailure);

// The reply of a GET that must have one: the kernel's refusal (refusal() below), or error 100
// (ENODEV) when no reply came.
template <typename T>
Result<T> theReply(Answer<T> a, const std::string& what);

// transact() + refusal(): success only on a zero ack.
Status request(nl_sock* sock, nl_msg* msg, const std::string& what,
               ErrorCode code = ErrorCode::kNetlinkFailure);

// A dump: rebuilds the request with `make` and retries while the kernel flags NLM_F_DUMP_INTR
// (the table changed mid-dump); after kDumpAttempts interrupted tries, error 11. `reset` is
// called before each attempt so partial results are discarded.
inline constexpr int kDumpAttempts = 4;
Status dump(nl_sock* sock, const std::function<MsgPtr()>& make, const std::function<void()>& reset,
            const OnReply& on_reply, const std::string& what,
            ErrorCode code = ErrorCode::kNetlinkFailure);

template <typename T>
Result<T> theReply(Answer<T> a, const std::string& what) {
  if (a.outcome.err != 0) return refusal(a.outcome, what);
  if (!a.value) return errnoError(ErrorCode::kDeviceNotFound, ENODEV, what);
  return std::move(*a.value);
}

// Best effort NLE_* -> errno, for the few libnl calls that only report NLE codes.
int nleToErrno(int nle);

}  // namespace rdmanet::nl
