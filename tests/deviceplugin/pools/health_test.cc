// The health model (health.h) on the simulated node: what breaks a VF (its PF's link and RDMA
// port, its link state on the PF, its driver) and what does not (a free VF being down).
#include "deviceplugin/pools/health.h"

#include <gtest/gtest.h>

#include "deviceplugin/pools/config.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using testing::TestNode;

constexpr LinkState kUp{.admin_up = true, .carrier = true};
constexpr LinkState kDown{.admin_up = false, .carrier = false};
constexpr LinkState kNoCarrier{.admin_up = true, .carrier = false};

class HealthTest : public ::testing::Test {
 protected:
  Pool vfPool() { return buildPools(defaultConfig(), node_.inventory())[0]; }
  Pool sharedPool() { return buildPools(defaultConfig(), node_.inventory())[1]; }
  HealthInputs seeded() {
    HealthInputs in;
    in.seedFromInventory(node_.inventory());
    return in;
  }
  std::string vf(int pf, int vf) { return node_.vf(pf, vf).str(); }
  std::string vfNetdev(int pf, int vf) { return node_.pfNetdev(pf) + "v" + std::to_string(vf); }
  std::string rdmaOf(const std::string& netdev) {
    for (const auto& n : node_.built().netdevs) {
      if (n.name == netdev) return n.rdma;
    }
    ADD_FAILURE() << "no netdev " << netdev;
    return "";
  }
  // Every VF of the node administratively down with its RDMA port DOWN: a node right after
  // `sriov_numvfs`, before any pod.
  void everyVfDown() {
    for (int pf = 0; pf < 4; ++pf) {
      for (int v = 0; v < 4; ++v) {
        node_.tree().setNetdevUp(vfNetdev(pf, v), false);
        node_.tree().setRdmaPortActive(rdmaOf(vfNetdev(pf, v)), 1, false);
      }
    }
    node_.rescan();
  }

  TestNode node_;
};

TEST_F(HealthTest, EveryVfDownAfterBootIsStillHealthy) {
  everyVfDown();
  Pool p = vfPool();
  HealthInputs in = seeded();
  for (int pf = 0; pf < 4; ++pf) {
    for (int v = 0; v < 4; ++v) in.links.set(vfNetdev(pf, v), kDown);  // netlink agrees
  }
  EXPECT_TRUE(applyHealth(p, in).empty());
  EXPECT_EQ(p.healthyCount(), 16u);
}

TEST_F(HealthTest, PfDownMakesExactlyItsVfsUnhealthyAndTheyRecover) {
  Pool p = vfPool();
  HealthInputs in = seeded();
  in.links.set("ens2f1", kDown);
  auto changes = applyHealth(p, in);
  ASSERT_EQ(changes.size(), 4u);
  for (const auto& c : changes) {
    EXPECT_FALSE(c.healthy);
    EXPECT_EQ(c.reason, "ens2f1 is down");
    EXPECT_EQ(p.find(c.id)->pf, node_.pf(3));
  }
  in.links.set("ens2f1", kUp);
  changes = applyHealth(p, in);
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_TRUE(changes[0].healthy);
  EXPECT_EQ(changes[0].reason, "");
  EXPECT_EQ(p.healthyCount(), 16u);
}

TEST_F(HealthTest, PfWithoutCarrierMakesItsVfsUnhealthy) {
  Pool p = vfPool();
  HealthInputs in = seeded();
  in.links.set("ens1f0", kNoCarrier);
  auto changes = applyHealth(p, in);
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].reason, "ens1f0 has no carrier");
}

TEST_F(HealthTest, SysfsOperstateOfThePfCountsWhenNetlinkDoesNotKnowIt) {
  node_.tree().setNetdevUp("ens1f1", false);
  node_.rescan();
  Pool p = vfPool();
  HealthInputs in = seeded();
  applyHealth(p, in);
  EXPECT_FALSE(p.find(vf(1, 0))->healthy);
  in.links.set("ens1f1", kUp);  // netlink says otherwise: netlink wins
  applyHealth(p, in);
  EXPECT_TRUE(p.find(vf(1, 0))->healthy);
}

TEST_F(HealthTest, PfRdmaPortNotActiveMakesItsVfsUnhealthy) {
  node_.tree().setRdmaPortActive(rdmaOf("ens2f0"), 1, false);
  node_.rescan();
  Pool p = vfPool();
  auto changes = applyHealth(p, seeded());
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].reason, rdmaOf("ens2f0") + " port 1 is DOWN");
}

TEST_F(HealthTest, VfLinkForcedOffOnThePfMakesOnlyThatVfUnhealthy) {
  Pool p = vfPool();
  HealthInputs in = seeded();
  in.vf_links["ens1f0"] = {{0, VfLinkState::kAuto},
                           {1, VfLinkState::kEnable},
                           {2, VfLinkState::kDisable},
                           {3, VfLinkState::kAuto}};
  auto changes = applyHealth(p, in);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, vf(0, 2));
  EXPECT_EQ(changes[0].reason, "link forced off on ens1f0 (vf 2 state disable)");
  in.vf_links["ens1f0"][2] = VfLinkState::kAuto;
  changes = applyHealth(p, in);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_TRUE(changes[0].healthy);
}

TEST_F(HealthTest, VfWithoutDriverOrOnVfioIsUnhealthy) {
  // Selected by vendor (not by netdev or RDMA device), so both stay in the pool.
  PluginConfig cfg = defaultConfig();
  cfg.pools[0].selectors = {Selector{.vendors = {"15b3"}}};
  node_.tree().bindDriver(node_.vf(0, 1), "");
  node_.tree().bindDriver(node_.vf(0, 3), "vfio-pci");
  node_.rescan();
  Pool p = buildPools(cfg, node_.inventory())[0];
  applyHealth(p, seeded());
  ASSERT_NE(p.find(vf(0, 1)), nullptr);
  ASSERT_NE(p.find(vf(0, 3)), nullptr);
  EXPECT_EQ(faultOf(*p.find(vf(0, 1)), false, seeded()), "no driver bound");
  EXPECT_EQ(faultOf(*p.find(vf(0, 3)), false, seeded()), "bound to vfio-pci (no netdev)");
  EXPECT_FALSE(p.find(vf(0, 1))->healthy);
  EXPECT_FALSE(p.find(vf(0, 3))->healthy);
  EXPECT_EQ(p.healthyCount(), 14u);
}

TEST_F(HealthTest, VfInAPodIsJudgedByItsPfAndItsLinkStateOnThePf) {
  Pool p = vfPool();
  for (auto& d : p.devices) d.netdev.clear();  // as when the VFs' netdevs are in pods
  HealthInputs in;                             // netlink knows only the host's links
  in.links.set("ens1f0", kUp);
  EXPECT_TRUE(applyHealth(p, in).empty());
  in.vf_links["ens1f0"][0] = VfLinkState::kDisable;
  EXPECT_EQ(applyHealth(p, in).size(), 1u);
  EXPECT_FALSE(p.find(vf(0, 0))->healthy);
  in.links.set("ens1f0", kDown);
  EXPECT_EQ(applyHealth(p, in).size(), 3u);  // its three siblings follow the PF
}

TEST_F(HealthTest, WhatIsNotObservedDoesNotCount) {
  Pool p = vfPool();
  EXPECT_TRUE(applyHealth(p, HealthInputs{}).empty());
  EXPECT_EQ(p.healthyCount(), 16u);
}

TEST_F(HealthTest, SharedPfMustBeUpWithAnActivePort) {
  Pool p = sharedPool();
  HealthInputs in = seeded();
  EXPECT_TRUE(applyHealth(p, in).empty());
  in.links.set("ens1f0", kDown);
  auto changes = applyHealth(p, in);
  ASSERT_EQ(changes.size(), static_cast<size_t>(kDefaultSharedSlots));
  EXPECT_EQ(changes[0].reason, "ens1f0 is down");
  in.links.set("ens1f0", kUp);
  EXPECT_EQ(applyHealth(p, in).size(), static_cast<size_t>(kDefaultSharedSlots));  // recovered
  in.rdma_ports[rdmaOf("ens1f0")] = {1};
  changes = applyHealth(p, in);
  ASSERT_EQ(changes.size(), static_cast<size_t>(kDefaultSharedSlots));
  EXPECT_EQ(changes[0].reason, rdmaOf("ens1f0") + " port 1 is DOWN");
}

// A PF without VFs handed to a pod whole (host-device): free means down, like a free VF.
TEST(WholeFunctionHealth, DownIsFreeButUpWithoutCarrierOrPortIsAFault) {
  PoolDevice d;
  d.id = "0000:05:00.0";
  d.netdev = "ens5";
  d.rdma_device = "mlx5_9";
  d.driver = "mlx5_core";
  HealthInputs in;
  in.links.set("ens5", kDown);
  in.rdma_ports["mlx5_9"] = {1};
  EXPECT_EQ(faultOf(d, false, in), std::nullopt);
  in.links.set("ens5", kNoCarrier);
  EXPECT_EQ(faultOf(d, false, in), "ens5 has no carrier");
  in.links.set("ens5", kUp);
  EXPECT_EQ(faultOf(d, false, in), "mlx5_9 port 1 is DOWN");
  in.rdma_ports["mlx5_9"] = {kRdmaPortActive};
  EXPECT_EQ(faultOf(d, false, in), std::nullopt);
  d.driver = "vfio-pci";
  EXPECT_EQ(faultOf(d, false, in), "bound to vfio-pci (no netdev)");
}

}  // namespace
}  // namespace rdmanet::dp
