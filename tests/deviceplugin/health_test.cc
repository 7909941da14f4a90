// The health model on the simulated node: carrier of the VF and its PF, and RDMA port state.
#include "deviceplugin/health.h"

#include <gtest/gtest.h>

#include "deviceplugin/config.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using testing::TestNode;

class HealthTest : public ::testing::Test {
 protected:
  Pool vfPool() { return buildPools(defaultConfig(), node_.inventory())[0]; }
  bool healthyAfter(Pool& p, const LinkStates& links, const std::string& id) {
    applyHealth(p, links);
    return p.find(id)->healthy;
  }
  std::string vf(int pf, int vf) { return node_.vf(pf, vf).str(); }

  TestNode node_;
};

TEST_F(HealthTest, AllHealthyOnAFreshNode) {
  Pool p = vfPool();
  LinkStates links;
  links.seedFromInventory(node_.inventory());
  EXPECT_TRUE(applyHealth(p, links).empty());
  EXPECT_EQ(p.healthyCount(), 16u);
}

TEST_F(HealthTest, VfCarrierDownMakesOnlyThatVfUnhealthy) {
  Pool p = vfPool();
  LinkStates links;
  links.seedFromInventory(node_.inventory());
  links.set("ens1f0v2", false);
  auto changes = applyHealth(p, links);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, vf(0, 2));
  EXPECT_FALSE(changes[0].healthy);
  links.set("ens1f0v2", true);
  changes = applyHealth(p, links);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_TRUE(changes[0].healthy);
}

TEST_F(HealthTest, PfCarrierDownMakesAllItsVfsUnhealthy) {
  Pool p = vfPool();
  LinkStates links;
  links.seedFromInventory(node_.inventory());
  links.set("ens2f1", false);
  EXPECT_EQ(applyHealth(p, links).size(), 4u);
  EXPECT_FALSE(p.find(vf(3, 0))->healthy);
  EXPECT_TRUE(p.find(vf(2, 0))->healthy);
}

TEST_F(HealthTest, SysfsOperstateCountsWhenNetlinkDoesNotKnowTheLink) {
  node_.tree().setNetdevUp("ens1f1v0", false);
  node_.rescan();
  Pool p = vfPool();
  LinkStates links;
  links.seedFromInventory(node_.inventory());
  EXPECT_FALSE(healthyAfter(p, links, vf(1, 0)));
  links.set("ens1f1v0", true);  // netlink says otherwise: netlink wins
  EXPECT_TRUE(healthyAfter(p, links, vf(1, 0)));
}

TEST_F(HealthTest, InactiveRdmaPortMakesTheDeviceUnhealthy) {
  const auto& nd = *std::find_if(node_.built().netdevs.begin(), node_.built().netdevs.end(),
                                 [&](const auto& n) { return n.name == "ens2f0v3"; });
  node_.tree().setRdmaPortActive(nd.rdma, 1, false);
  node_.rescan();
  Pool p = vfPool();
  LinkStates links;
  links.seedFromInventory(node_.inventory());
  EXPECT_FALSE(healthyAfter(p, links, vf(2, 3)));
  EXPECT_EQ(p.healthyCount(), 15u);
}

TEST_F(HealthTest, VfWithoutNetdevIsJudgedByItsPfAndPort) {
  Pool p = vfPool();
  for (auto& d : p.devices) d.netdev.clear();  // as when the VF's netdev is in a pod
  LinkStates links;
  links.set("ens1f0", true);
  EXPECT_TRUE(healthyAfter(p, links, vf(0, 0)));
  links.set("ens1f0", false);
  EXPECT_FALSE(healthyAfter(p, links, vf(0, 0)));
}

}  // namespace
}  // namespace rdmanet::dp
