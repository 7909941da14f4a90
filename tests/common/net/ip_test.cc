#include "common/net/ip.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

namespace rdmanet {
namespace {

TEST(IpAddressTest, ParsesV4AndV6AndPrintsCanonically) {
  auto v4 = IpAddress::parse("10.0.0.2");
  ASSERT_TRUE(v4.ok());
  EXPECT_TRUE(v4->isV4());
  EXPECT_EQ(v4->str(), "10.0.0.2");
  auto v6 = IpAddress::parse("FD00:0:0::2");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->family, AF_INET6);
  EXPECT_EQ(v6->str(), "fd00::2");
}

TEST(IpAddressTest, RejectsBadInputWithInvalidConfig) {
  for (const char* bad :
       {"", "10.0.0", "10.0.0.256", "1.2.3.4 ", "fd00:::1", "abc", "10.0.0.1/24", "fd00::1%eth0"}) {
    auto r = IpAddress::parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig) << bad;
  }
  EXPECT_FALSE(IpAddress::parse(std::string(100, '1')).ok());
}

TEST(IpPrefixTest, ParsesPrefixes) {
  auto p = IpPrefix::parse("10.1.2.3/24");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->prefix_len, 24);
  EXPECT_EQ(p->str(), "10.1.2.3/24");
  EXPECT_EQ(IpPrefix::parse("fd00::2/64")->str(), "fd00::2/64");
  EXPECT_EQ(IpPrefix::parse("0.0.0.0/0")->prefix_len, 0);
  EXPECT_EQ(IpPrefix::parse("::/128")->prefix_len, 128);
}

TEST(IpPrefixTest, RejectsBadPrefixes) {
  for (const char* bad : {"10.0.0.1", "10.0.0.1/33", "fd00::1/129", "10.0.0.1/-1", "10.0.0.1/",
                          "10.0.0.1/2x", "/24", "10.0.0.1/24/1"}) {
    auto r = IpPrefix::parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig) << bad;
  }
}

TEST(IpPrefixTest, ComparesByValue) {
  EXPECT_EQ(IpPrefix::parse("10.0.0.1/24").value(), IpPrefix::parse("10.0.0.1/24").value());
  EXPECT_NE(IpPrefix::parse("10.0.0.1/24").value(), IpPrefix::parse("10.0.0.1/25").value());
}

}  // namespace
}  // namespace rdmanet
