// EthtoolPauseReader: ETHTOOL_MSG_PAUSE_GET over generic netlink, through the same request/reply
// loop as the rtnetlink code (libnl_socket.h); libnl-genl only resolves the family id.
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include <cerrno>
#include <optional>

#include "common/net/libnl_socket.h"
#include "common/net/pause.h"

namespace rdmanet {

struct EthtoolPauseReader::Impl {
  nl::SockPtr sock;
  int family = 0;
};

EthtoolPauseReader::EthtoolPauseReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EthtoolPauseReader::~EthtoolPauseReader() = default;

Result<std::unique_ptr<EthtoolPauseReader>> EthtoolPauseReader::open() {
  RDMANET_ASSIGN_OR_RETURN(nl::SockPtr sock,
                           nl::connect(NETLINK_GENERIC, ErrorCode::kNetlinkFailure));
  const int family = genl_ctrl_resolve(sock.get(), ETHTOOL_GENL_NAME);
  if (family < 0) {
    // Kernels before 5.6 (or built without CONFIG_ETHTOOL_NETLINK) have no such family.
    return errnoError(ErrorCode::kNetlinkFailure, nl::nleToErrno(family),
                      "resolving generic netlink family \"ethtool\"");
  }
  auto impl = std::make_unique<Impl>();
  impl->sock = std::move(sock);
  impl->family = family;
  return std::unique_ptr<EthtoolPauseReader>(new EthtoolPauseReader(std::move(impl)));
}

Result<PauseState> EthtoolPauseReader::pause(const std::string& ifname) {
  const std::string what = "ethtool PAUSE_GET " + ifname;
  nl::MsgPtr msg(nlmsg_alloc());
  if (!msg) return errnoError(ErrorCode::kNetlinkFailure, ENOMEM, what);
  if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, impl_->family, 0, 0, ETHTOOL_MSG_PAUSE_GET,
                   ETHTOOL_GENL_VERSION)) {
    return errnoError(ErrorCode::kNetlinkFailure, EMSGSIZE, what);
  }
  // ethtool's policies are strict: the header nest must carry NLA_F_NESTED.
  nlattr* hdr = nla_nest_start(msg.get(), ETHTOOL_A_PAUSE_HEADER | NLA_F_NESTED);
  if (!hdr || nla_put_string(msg.get(), ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str()) < 0) {
    return errnoError(ErrorCode::kNetlinkFailure, EMSGSIZE, what);
  }
  nla_nest_end(msg.get(), hdr);

  std::optional<Result<PauseState>> got;
  auto on_reply = [&](const nlmsghdr&, std::span<const uint8_t> payload) -> Status {
    if (payload.size() < GENL_HDRLEN) return okStatus();
    got = parsePauseReply(payload.subspan(GENL_HDRLEN));
    return okStatus();
  };
  RDMANET_ASSIGN_OR_RETURN(nl::Outcome o, nl::transact(impl_->sock.get(), msg.get(), on_reply,
                                                       ErrorCode::kNetlinkFailure));
  if (o.err != 0) return nl::refusal(o, what);
  if (!got) return errnoError(ErrorCode::kNetlinkFailure, ENODATA, what + ": no reply");
  return *got;
}

}  // namespace rdmanet
