// NodePools on the simulated node: pools with health from the scan, transitions counted once,
// the event-driven rescan that re-reads only the PF a uevent names, and the periodic resync that
// rescans only when the node's shape changed.
#include "deviceplugin/pools/node_pools.h"

#include <gtest/gtest.h>

#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using testing::TestNode;

class NodePoolsTest : public ::testing::Test {
 protected:
  NodePoolsTest() : sysfs_(node_.root()), core_(sysfs_, defaultConfig()) { core_.rescan(); }
  // The uevent DEVPATH of a function's netdev, as the kernel sends it.
  std::string devpathOf(const PciAddress& fn, const std::string& netdev) {
    const NicFunction* f = core_.inventory().nic(fn);
    EXPECT_NE(f, nullptr);
    return f->pci.sysfs_dir.substr(std::string("/sys").size()) + "/net/" + netdev;
  }

  TestNode node_;
  Sysfs sysfs_;
  NodePools core_;
};

TEST_F(NodePoolsTest, HealthTransitionsAreReportedOnce) {
  auto first = core_.build();
  EXPECT_TRUE(first.changes.empty());
  ASSERT_EQ(first.pools.size(), 2u);
  EXPECT_EQ(first.pools[0].healthyCount(), 16u);
  core_.setLink(node_.pfNetdev(1), {.admin_up = false, .carrier = false});
  auto down = core_.build();
  EXPECT_EQ(down.changes.size(), 4u + kDefaultSharedSlots);  // its VFs and its shared slots
  EXPECT_EQ(down.changes[0].change.reason, node_.pfNetdev(1) + " is down");
  EXPECT_TRUE(core_.build().changes.empty());
}

TEST_F(NodePoolsTest, AUeventRereadsOnlyItsPf) {
  const PciAddress vf = node_.vf(2, 1);
  node_.tree().bindDriver(vf, "");  // unbound: the uevent names the VF's netdev going away
  node_.tree().setNetdevUp(node_.pfNetdev(0), false);  // another PF: not re-read, so not seen
  EXPECT_FALSE(core_.rescanFor({devpathOf(vf, node_.pfNetdev(2) + "v1")}));
  auto built = core_.build();
  const Pool& vfs = built.pools[0];
  ASSERT_NE(vfs.find(vf.str()), nullptr);
  EXPECT_FALSE(vfs.find(vf.str())->healthy);  // the change of the re-read PF is seen
  EXPECT_EQ(vfs.healthyCount(), 15u);         // ens1f0's change is not: nobody said so
  core_.rescan();
  EXPECT_EQ(core_.build().pools[0].healthyCount(), 11u);
}

TEST_F(NodePoolsTest, AResyncAfterAUeventRereadDoesNotRescanAgain) {
  const PciAddress vf = node_.vf(1, 0);
  node_.tree().bindDriver(vf, "");  // its netdev and RDMA device go: the class listing changes
  EXPECT_FALSE(core_.rescanFor({devpathOf(vf, node_.pfNetdev(1) + "v0")}));
  std::string why;
  EXPECT_FALSE(core_.resync(&why)) << why;  // the re-read took the node's listings too
}

TEST_F(NodePoolsTest, AUeventOfNoPciFunctionRescansTheWholeNode) {
  node_.tree().setNetdevUp(node_.pfNetdev(0), false);
  EXPECT_TRUE(core_.rescanFor({"/devices/virtual/infiniband/rxe0"}));
  EXPECT_EQ(core_.build().pools[0].healthyCount(), 12u);
}

TEST_F(NodePoolsTest, AResyncOfAnUnchangedNodeChangesNothing) {
  const auto before = core_.build();
  std::string why = "untouched";
  EXPECT_FALSE(core_.resync(&why));
  EXPECT_EQ(why, "untouched");
  const auto after = core_.build();
  ASSERT_EQ(after.pools.size(), before.pools.size());
  for (size_t i = 0; i < after.pools.size(); ++i) {
    EXPECT_EQ(after.pools[i].devices, before.pools[i].devices);
  }
}

TEST_F(NodePoolsTest, AResyncSeesAPfPortGoingDownThatNoEventReported) {
  core_.build();
  const NicFunction* pf = core_.inventory().nic(node_.pf(1));
  ASSERT_NE(pf, nullptr);
  node_.tree().setRdmaPortActive(pf->rdma.at(0).name, 1, false);
  EXPECT_TRUE(core_.build().changes.empty());  // not re-read yet
  std::string why;
  EXPECT_TRUE(core_.resync(&why));
  EXPECT_EQ(why, "RDMA port, PF link or VF link state");
  EXPECT_EQ(core_.build().pools[0].healthyCount(), 12u);  // its 4 VFs
  node_.tree().setRdmaPortActive(pf->rdma.at(0).name, 1, true);
  EXPECT_TRUE(core_.resync());
  EXPECT_EQ(core_.build().pools[0].healthyCount(), 16u);
}

TEST_F(NodePoolsTest, AResyncReadsAPfLinkStateFromSysfsWhenNetlinkIsSilent) {
  core_.build();
  node_.tree().setNetdevUp(node_.pfNetdev(2), false);
  EXPECT_TRUE(core_.resync());
  EXPECT_EQ(core_.build().pools[0].healthyCount(), 12u);
}

TEST_F(NodePoolsTest, AResyncRescansWhenTheShapeChanged) {
  core_.build();
  const PciAddress vf = node_.vf(0, 3);
  node_.tree().bindDriver(vf, "");
  std::string why;
  EXPECT_TRUE(core_.resync(&why));
  EXPECT_NE(why.find(vf.str() + ": driver"), std::string::npos) << why;
  auto built = core_.build();
  ASSERT_NE(built.pools[0].find(vf.str()), nullptr);
  EXPECT_FALSE(built.pools[0].find(vf.str())->healthy);
  EXPECT_FALSE(core_.resync());  // the rescan took the new shape
}

}  // namespace
}  // namespace rdmanet::dp
