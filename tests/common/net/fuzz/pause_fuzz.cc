// libFuzzer target over the global-pause codec (common/net/pause.h): the input is an
// ETHTOOL_MSG_PAUSE_GET_REPLY's attributes after the genlmsghdr (seeds built from the
// <linux/ethtool_netlink.h> layout, make_seeds.py). Invariant: no crash, no read out of bounds.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/net/pause.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (auto p = rdmanet::parsePauseReply(std::span<const uint8_t>(data, size)); p.ok()) {
    (void)p->on();
  }
  return 0;
}
