#include "common/net/pause.h"

#include <linux/ethtool_netlink.h>

#include <cerrno>

#include "common/net/nlattr_view.h"

namespace rdmanet {

Result<PauseState> parsePauseReply(std::span<const uint8_t> attrs) {
  // net/ethtool/pause.c pause_fill_reply(): AUTONEG, RX and TX as u8 flags, always present.
  if (!nlattr::wellFormed(attrs)) {
    return errnoError(ErrorCode::kNetlinkFailure, EBADMSG, "ethtool PAUSE_GET reply is malformed");
  }
  auto flag = [&](uint16_t type) -> std::optional<bool> {
    auto a = nlattr::find(attrs, type);
    if (!a) return std::nullopt;
    auto v = a->as<uint8_t>();
    if (!v) return std::nullopt;
    return *v != 0;
  };
  const auto autoneg = flag(ETHTOOL_A_PAUSE_AUTONEG);
  const auto rx = flag(ETHTOOL_A_PAUSE_RX);
  const auto tx = flag(ETHTOOL_A_PAUSE_TX);
  if (!autoneg || !rx || !tx) {
    return errnoError(ErrorCode::kNetlinkFailure, EBADMSG,
                      "ethtool PAUSE_GET reply lacks the AUTONEG/RX/TX attributes");
  }
  return PauseState{.autoneg = *autoneg, .rx = *rx, .tx = *tx};
}

}  // namespace rdmanet
