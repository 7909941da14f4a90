// The resync's shape check on the simulated node: every kind of change a full scan would see is
// found and named, and what health re-reads on its own (port and link state) is not a change.
#include "deviceplugin/pools/scan_shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using ::testing::HasSubstr;
using testing::TestNode;

class ScanShapeTest : public ::testing::Test {
 protected:
  ScanShapeTest() : sysfs_(node_.root()), shape_(readScanShape(sysfs_)) {
    inv_ = scanNode(sysfs_, {.gids = false});
  }
  std::optional<std::string> change() const { return shapeChange(sysfs_, inv_, shape_); }
  std::string rdmaOf(const PciAddress& fn) const { return inv_.nic(fn)->rdma.at(0).name; }

  TestNode node_;
  Sysfs sysfs_;
  ScanShape shape_;
  NodeInventory inv_;
};

TEST_F(ScanShapeTest, AnUnchangedNodeHasTheShapeItWasScannedWith) {
  EXPECT_FALSE(shape_.pci_functions.empty());
  EXPECT_FALSE(shape_.rdma_devices.empty());
  EXPECT_EQ(change(), std::nullopt);
}

TEST_F(ScanShapeTest, LinkAndPortStateAreNotShape) {
  node_.tree().setNetdevUp(node_.pfNetdev(0), false);
  node_.tree().setRdmaPortActive(rdmaOf(node_.pf(0)), 1, false);
  EXPECT_EQ(change(), std::nullopt);
}

TEST_F(ScanShapeTest, ADriverChangeIsFound) {
  node_.tree().bindDriver(node_.vf(1, 2), "vfio-pci");
  auto c = change();
  ASSERT_TRUE(c);
  EXPECT_THAT(*c, HasSubstr(node_.vf(1, 2).str() + ": driver"));
  EXPECT_THAT(*c, HasSubstr("vfio-pci"));
}

TEST_F(ScanShapeTest, ANetdevGoneIsFound) {
  const std::string netdev = inv_.nic(node_.vf(0, 1))->netdevs.at(0).name;
  node_.tree().removeNetdev(netdev);
  auto c = change();
  ASSERT_TRUE(c);
  EXPECT_THAT(*c, HasSubstr(node_.vf(0, 1).str() + ": netdevs now []"));
}

TEST_F(ScanShapeTest, AHardwareRdmaDeviceGoneIsFound) {
  const std::string dev = rdmaOf(node_.vf(2, 0));
  node_.tree().remove(node_.tree().dirOf(node_.vf(2, 0)) + "/infiniband/" + dev);
  auto c = change();
  ASSERT_TRUE(c);
  EXPECT_THAT(*c, HasSubstr(node_.vf(2, 0).str() + ": RDMA devices now []"));
}

TEST_F(ScanShapeTest, AVfCountChangeIsFound) {
  const std::string dir = node_.tree().dirOf(node_.pf(3));
  node_.tree().writeAttr(dir + "/sriov_numvfs", "0");
  auto c = change();
  ASSERT_TRUE(c);
  EXPECT_THAT(*c, HasSubstr(node_.pf(3).str() + ": sriov_numvfs 4 -> 0"));
}

TEST_F(ScanShapeTest, AFunctionGoneOrASoftwareRdmaDeviceAddedIsFound) {
  node_.tree().remove("/sys/bus/pci/devices/" + node_.vf(3, 3).str());
  auto gone = change();
  ASSERT_TRUE(gone);
  EXPECT_THAT(*gone, HasSubstr("PCI functions"));

  shape_ = readScanShape(sysfs_);
  inv_ = scanNode(sysfs_, {.gids = false});
  ASSERT_EQ(change(), std::nullopt);
  node_.tree().addSoftRdma({.name = "rxe7"}, node_.pfNetdev(0));
  auto added = change();
  ASSERT_TRUE(added);
  EXPECT_THAT(*added, HasSubstr("rxe7"));
}

}  // namespace
}  // namespace rdmanet::dp
