// LldpTable: neighbours kept to the TTL of their last frame, forgotten at TTL 0 or when their
// netdev is no longer a port.
#include "deviceplugin/daemon/lldp_table.h"

#include <gtest/gtest.h>

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;

LldpNeighbor neighbor(std::string name, int ttl = 4) {
  return {.chassis_id = "c", .port_id = "p", .ttl_seconds = ttl, .system_name = std::move(name)};
}

TEST(LldpTableTest, ANeighbourLivesUntilItsLastFramesTtlRunsOut) {
  LldpTable t;
  const Clock::time_point t0{};
  EXPECT_TRUE(t.heard("ens1", neighbor("leaf-1"), t0));
  EXPECT_FALSE(t.heard("ens1", neighbor("leaf-1"), t0 + 1s));  // the same: no change
  EXPECT_EQ(t.nextExpiry(), t0 + 5s);                          // refreshed by the second
  EXPECT_FALSE(t.expire(t0 + 4s));
  EXPECT_EQ(t.neighbors().at("ens1").system_name, "leaf-1");
  EXPECT_TRUE(t.expire(t0 + 5s));
  EXPECT_TRUE(t.neighbors().empty());
  EXPECT_EQ(t.nextExpiry(), std::nullopt);
}

TEST(LldpTableTest, ADifferentNeighbourIsAChangeAndTtlZeroForgets) {
  LldpTable t;
  const Clock::time_point t0{};
  EXPECT_TRUE(t.heard("ens1", neighbor("leaf-1"), t0));
  EXPECT_TRUE(t.heard("ens1", neighbor("leaf-2"), t0));
  EXPECT_TRUE(t.heard("ens2", neighbor("leaf-3", 120), t0));
  EXPECT_EQ(t.neighbors().size(), 2u);
  EXPECT_TRUE(t.heard("ens1", neighbor("leaf-2", 0), t0));
  EXPECT_FALSE(t.heard("ens1", neighbor("leaf-2", 0), t0));  // already forgotten
  EXPECT_EQ(t.neighbors().size(), 1u);
  EXPECT_EQ(t.nextExpiry(), t0 + 120s);
}

TEST(LldpTableTest, NetdevsThatAreNoLongerPortsAreForgotten) {
  LldpTable t;
  t.heard("ens1", neighbor("leaf-1"), {});
  t.heard("ens2", neighbor("leaf-2"), {});
  EXPECT_FALSE(t.retain({"ens1", "ens2", "ens3"}));
  EXPECT_TRUE(t.retain({"ens2"}));
  EXPECT_EQ(t.neighbors().size(), 1u);
  EXPECT_TRUE(t.neighbors().contains("ens2"));
}

}  // namespace
}  // namespace rdmanet::dp
