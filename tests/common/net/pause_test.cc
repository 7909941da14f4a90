// parsePauseReply with hand-built ETHTOOL_MSG_PAUSE_GET_REPLY attributes, in the order
// net/ethtool/pause.c pause_fill_reply() puts them (header nest, AUTONEG, RX, TX as u8).
#include "common/net/pause.h"

#include <gtest/gtest.h>
#include <linux/ethtool_netlink.h>

#include <cerrno>

#include "tests/common/net/nl_bytes.h"

namespace rdmanet {
namespace {

using testing::NlBytes;

NlBytes reply(uint8_t autoneg, uint8_t rx, uint8_t tx) {
  NlBytes b;
  b.begin(ETHTOOL_A_PAUSE_HEADER)
      .attr(ETHTOOL_A_HEADER_DEV_INDEX, uint32_t{7})
      .str(ETHTOOL_A_HEADER_DEV_NAME, "enp0s3")
      .end();
  b.attr(ETHTOOL_A_PAUSE_AUTONEG, autoneg)
      .attr(ETHTOOL_A_PAUSE_RX, rx)
      .attr(ETHTOOL_A_PAUSE_TX, tx);
  return b;
}

TEST(PauseReplyTest, ReadsAutonegRxTx) {
  auto s = parsePauseReply(reply(1, 1, 0).bytes());
  ASSERT_TRUE(s.ok()) << s.error().msg;
  EXPECT_TRUE(s->autoneg);
  EXPECT_TRUE(s->rx);
  EXPECT_FALSE(s->tx);
  EXPECT_TRUE(s->on());
}

TEST(PauseReplyTest, AllOffIsNotOn) {
  auto s = parsePauseReply(reply(0, 0, 0).bytes());
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->on());
}

TEST(PauseReplyTest, MissingFlagIsAnError) {
  NlBytes b;
  b.attr(ETHTOOL_A_PAUSE_AUTONEG, uint8_t{0}).attr(ETHTOOL_A_PAUSE_RX, uint8_t{0});
  auto s = parsePauseReply(b.bytes());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().sys_errno, EBADMSG);
}

TEST(PauseReplyTest, TruncatedBytesAreAnError) {
  auto bytes = reply(0, 1, 1).bytes();
  bytes.resize(bytes.size() - 6);  // cuts the TX attribute's header in half
  bytes.push_back(0x40);           // and claims more than remains
  auto s = parsePauseReply(bytes);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace rdmanet
