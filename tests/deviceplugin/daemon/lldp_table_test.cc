// LldpTable: neighbours kept to the TTL of their last frame, forgotten at TTL 0 or when their
// netdev is no longer a port, and changed at most once per hold-down.
#include "deviceplugin/daemon/lldp_table.h"

#include <gtest/gtest.h>

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;

LldpNeighbor neighbor(std::string name, int ttl = 4) {
  return {.chassis_id = "c", .port_id = "p", .ttl_seconds = ttl, .system_name = std::move(name)};
}

constexpr Clock::time_point t0{};
constexpr auto kAfterHoldDown = LldpTable::kHoldDown;

TEST(LldpTableTest, ANeighbourLivesUntilItsLastFramesTtlRunsOut) {
  LldpTable t;
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-1"), t0), LldpHeard::kChanged);
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-1"), t0 + 1s), LldpHeard::kSame);
  EXPECT_EQ(t.nextExpiry(), t0 + 5s);  // refreshed by the second
  EXPECT_FALSE(t.expire(t0 + 4s));
  EXPECT_EQ(t.neighbors().at("ens1").system_name, "leaf-1");
  EXPECT_TRUE(t.expire(t0 + 5s));
  EXPECT_TRUE(t.neighbors().empty());
  EXPECT_EQ(t.nextExpiry(), std::nullopt);
}

TEST(LldpTableTest, ADifferentNeighbourIsAChangeAndTtlZeroForgets) {
  LldpTable t;
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-1", 120), t0), LldpHeard::kChanged);
  EXPECT_EQ(t.heard("ens2", neighbor("leaf-3", 120), t0), LldpHeard::kChanged);  // its own port
  const auto t1 = t0 + kAfterHoldDown;
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-2", 120), t1), LldpHeard::kChanged);
  EXPECT_EQ(t.neighbors().at("ens1").system_name, "leaf-2");
  const auto t2 = t1 + kAfterHoldDown;
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-2", 0), t2), LldpHeard::kChanged);
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-2", 0), t2 + 1s), LldpHeard::kSame);  // already gone
  EXPECT_EQ(t.neighbors().size(), 1u);
  EXPECT_EQ(t.nextExpiry(), t0 + 120s);
}

TEST(LldpTableTest, APortsNeighbourChangesAtMostOncePerHoldDown) {
  LldpTable t;
  ASSERT_EQ(t.heard("ens1", neighbor("leaf-1"), t0), LldpHeard::kChanged);
  // Another sender on the wire within the hold-down: ignored, the first stands.
  EXPECT_EQ(t.heard("ens1", neighbor("spoof"), t0 + 1s), LldpHeard::kHeldDown);
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-1", 0), t0 + 2s), LldpHeard::kHeldDown);
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-1"), t0 + 3s), LldpHeard::kSame);
  EXPECT_EQ(t.neighbors().at("ens1").system_name, "leaf-1");
  // After it, the next change is taken; and the one after that waits again.
  const auto t1 = t0 + kAfterHoldDown;
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-9"), t1), LldpHeard::kChanged);
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-1"), t1 + 1s), LldpHeard::kHeldDown);
  EXPECT_EQ(t.neighbors().at("ens1").system_name, "leaf-9");
  // A neighbour whose TTL ran out comes back at once only after the hold-down.
  EXPECT_TRUE(t.expire(t1 + 4s));
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-9"), t1 + 5s), LldpHeard::kHeldDown);
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-9"), t1 + kAfterHoldDown), LldpHeard::kChanged);
}

TEST(LldpTableTest, NetdevsThatAreNoLongerPortsAreForgotten) {
  LldpTable t;
  t.heard("ens1", neighbor("leaf-1"), t0);
  t.heard("ens2", neighbor("leaf-2"), t0);
  EXPECT_FALSE(t.retain({"ens1", "ens2", "ens3"}));
  EXPECT_TRUE(t.retain({"ens2"}));
  EXPECT_EQ(t.neighbors().size(), 1u);
  EXPECT_TRUE(t.neighbors().contains("ens2"));
  // ens1 made a port again: its first neighbour is taken at once.
  EXPECT_EQ(t.heard("ens1", neighbor("leaf-1"), t0 + 1s), LldpHeard::kChanged);
}

}  // namespace
}  // namespace rdmanet::dp
