// LibnlNetlink's egress shaping on the real kernel: a TBF root qdisc on a veth in a throw-away
// namespace, read back from the kernel's qdisc dump.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "tests/common/net/libnl_fixture.h"

namespace rdmanet::testing {
namespace {

using LibnlQdiscTest = LibnlNetnsTest;

TEST_F(LibnlQdiscTest, ATbfRootHoldsTheRateAndReplacesTheLastOne) {
  const int va = index("va");
  auto before = nl_->egressRate(va);
  ASSERT_TRUE(before.ok()) << before.error().msg;
  EXPECT_EQ(*before, std::nullopt) << "a veth starts with its default root qdisc";

  ASSERT_TRUE(nl_->setEgressRate(va, 500).ok());
  auto small = nl_->egressRate(va);
  ASSERT_TRUE(small.ok()) << small.error().msg;
  EXPECT_EQ(*small, std::optional<uint64_t>(500));
  // Above 2^32-1 bytes/s (34 Gbit/s) the kernel reads the rate from TCA_TBF_RATE64.
  ASSERT_TRUE(nl_->setEgressRate(va, 50'000).ok());
  auto large = nl_->egressRate(va);
  ASSERT_TRUE(large.ok()) << large.error().msg;
  EXPECT_EQ(*large, std::optional<uint64_t>(50'000));
  // The peer keeps its own root: the dump is read per link.
  auto peer = nl_->egressRate(index("vb"));
  ASSERT_TRUE(peer.ok());
  EXPECT_EQ(*peer, std::nullopt);
}

TEST_F(LibnlQdiscTest, AMissingLinkOrAZeroRateIsAnError) {
  auto gone = nl_->egressRate(99'999);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kDeviceNotFound);
  Status s = nl_->setEgressRate(99'999, 100);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kDeviceNotFound);
  Status zero = nl_->setEgressRate(index("va"), 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().sys_errno, EINVAL);
}

}  // namespace
}  // namespace rdmanet::testing
