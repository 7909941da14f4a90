// parseDcbReply with hand-built RTM_GETDCB replies (no virtual driver implements DCB).
#include "common/net/dcb.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <sys/socket.h>

#include "tests/common/net/nl_bytes.h"

namespace rdmanet {
namespace {

using testing::NlBytes;

NlBytes header() {
  dcbmsg m{};
  m.dcb_family = AF_UNSPEC;
  m.cmd = DCB_CMD_IEEE_GET;
  NlBytes b;
  b.raw(m).str(DCB_ATTR_IFNAME, "ens1f0");
  return b;
}

NlBytes withPfcAndApps(uint8_t pfc_en, const std::vector<dcb_app>& apps) {
  NlBytes b = header();
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = pfc_en;
  b.begin(DCB_ATTR_IEEE).attr(DCB_ATTR_IEEE_PFC, pfc).begin(DCB_ATTR_IEEE_APP_TABLE);
  for (const dcb_app& a : apps) b.attr(DCB_ATTR_IEEE_APP, a);
  b.end().end();
  return b;
}

TEST(DcbTest, PfcOnPriority3) {
  auto s = parseDcbReply(withPfcAndApps(1 << 3, {}).bytes());
  ASSERT_TRUE(s.ok()) << s.error().msg;
  EXPECT_TRUE(s->supported);
  EXPECT_EQ(s->pfc_cap, 8);
  EXPECT_TRUE(s->pfcOn(3));
  for (int p : {0, 1, 2, 4, 5, 6, 7}) EXPECT_FALSE(s->pfcOn(p)) << p;
}

TEST(DcbTest, DscpAppTableMeansDscpTrust) {
  auto s = parseDcbReply(
      withPfcAndApps(1 << 3,
                     {{.selector = IEEE_8021QAZ_APP_SEL_DSCP, .priority = 3, .protocol = 26},
                      {.selector = IEEE_8021QAZ_APP_SEL_DSCP, .priority = 3, .protocol = 24},
                      {.selector = IEEE_8021QAZ_APP_SEL_DSCP, .priority = 0, .protocol = 0}})
          .bytes());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->trust(), TrustMode::kDscp);
  EXPECT_EQ(s->dscpsFor(3), (std::vector<uint8_t>{24, 26}));
  EXPECT_EQ(s->apps.size(), 3u);
  EXPECT_EQ(s->apps[0], (DcbApp{.selector = 5, .priority = 3, .protocol = 26}));
}

TEST(DcbTest, NoDscpEntriesMeansPcpTrust) {
  auto s = parseDcbReply(withPfcAndApps(1 << 3, {{.selector = IEEE_8021QAZ_APP_SEL_ETHERTYPE,
                                                  .priority = 3,
                                                  .protocol = 0x8915}})  // RoCE v1 ethertype
                             .bytes());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->trust(), TrustMode::kPcp);
  EXPECT_TRUE(s->dscpsFor(3).empty());
}

TEST(DcbTest, ReplyWithoutIeeeAttributesIsUnsupportedNotError) {
  auto s = parseDcbReply(header().bytes());
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->supported);
  EXPECT_EQ(s->pfc_enabled, 0);
}

TEST(DcbTest, TruncatedBytesAreCleanError) {
  const auto full =
      withPfcAndApps(1 << 3, {{.selector = 5, .priority = 3, .protocol = 26}}).bytes();
  for (size_t n : {size_t{0}, size_t{2}, full.size() - 3, full.size() - 20}) {
    auto s = parseDcbReply(std::span(full).first(n));
    ASSERT_FALSE(s.ok()) << "length " << n;
    EXPECT_EQ(s.error().code, ErrorCode::kNetlinkFailure);
  }
}

TEST(DcbTest, ShortPfcStructIsCleanError) {
  NlBytes b = header();
  const uint32_t too_short = 0;
  b.begin(DCB_ATTR_IEEE).attr(DCB_ATTR_IEEE_PFC, too_short).end();
  EXPECT_FALSE(parseDcbReply(b.bytes()).ok());
}

TEST(DcbTest, WrongCommandIsError) {
  dcbmsg m{};
  m.cmd = DCB_CMD_GSTATE;
  NlBytes b;
  b.raw(m);
  EXPECT_FALSE(parseDcbReply(b.bytes()).ok());
}

}  // namespace
}  // namespace rdmanet
