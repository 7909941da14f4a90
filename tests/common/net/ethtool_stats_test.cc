// IoctlEthtoolStats against the real kernel in a throw-away netns: veth reports its driver
// statistics (peer_ifindex among them); an unknown name is ENODEV. mlx5's per-priority pause
// counters need the hardware: podnet's tests feed them through a fake reader.
#include "common/net/ethtool_stats.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "tests/common/net/libnl_fixture.h"

namespace rdmanet {
namespace {

using EthtoolStatsTest = testing::LibnlNetnsTest;

TEST_F(EthtoolStatsTest, VethNamesItsPeer) {
  auto r = IoctlEthtoolStats::open();
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto stats = (*r)->stats("va");
  ASSERT_TRUE(stats.ok()) << stats.error().msg;
  bool found = false;
  for (const auto& [name, value] : *stats) {
    if (name == "peer_ifindex") {
      found = true;
      EXPECT_EQ(value, static_cast<uint64_t>(index("vb")));
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(EthtoolStatsTest, UnknownPortIsEnodev) {
  auto r = IoctlEthtoolStats::open();
  ASSERT_TRUE(r.ok());
  auto s = (*r)->stats("nosuchport0");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().sys_errno, ENODEV);
  EXPECT_EQ(s.error().code, ErrorCode::kDeviceNotFound);
}

}  // namespace
}  // namespace rdmanet
