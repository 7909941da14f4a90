#include "common/inventory/rdma.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/simnode/sim_tree.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

using sim::pci;

const RdmaCharDevice* findChar(const RdmaDevice& d, const std::string& name) {
  auto it = std::find_if(d.char_devices.begin(), d.char_devices.end(),
                         [&](const RdmaCharDevice& c) { return c.name == name; });
  return it == d.char_devices.end() ? nullptr : &*it;
}

// A PF with RDMA (mlx5_0) and no VFs, plus an unrelated function with a Soft-RoCE device.
class RdmaTest : public ::testing::Test {
 protected:
  RdmaTest() : tree_(dir_.path()), sysfs_(dir_.path()) {
    const auto rp = tree_.addBridge(tree_.addHostBridge(0, 0x80), {.address = pci("0000:80:01.0")});
    tree_.addFunction(rp, {.address = pci("0000:81:00.0"), .sriov_totalvfs = 8});
    tree_.addNetdev(pci("0000:81:00.0"), {.name = "ens1f0", .ifindex = 4});
    sim::RdmaPortSpec port;
    port.gids = {{.index = 0, .gid = kGid, .type = "IB/RoCE v1", .ndev = "ens1f0"},
                 {.index = 1, .gid = kGid, .type = "RoCE v2", .ndev = "ens1f0"}};
    tree_.addRdmaDevice(pci("0000:81:00.0"), {.name = "mlx5_0",
                                              .node_guid = "0e42:a1ff:fe00:0001",
                                              .ports = {port},
                                              .uverbs = 3,
                                              .umad = 2});
  }
  static constexpr const char* kGid = "fe80:0000:0000:0000:0e42:a1ff:fe00:0001";

  sim::TempDir dir_;
  sim::SimTree tree_;
  Sysfs sysfs_;
};

TEST_F(RdmaTest, ReadsHardwareDevice) {
  auto d = readRdmaDevice(sysfs_, "mlx5_0");
  ASSERT_TRUE(d.ok()) << d.error().msg;
  EXPECT_EQ(d->name, "mlx5_0");
  EXPECT_EQ(d->pci, pci("0000:81:00.0"));
  EXPECT_FALSE(d->is_software);
  EXPECT_EQ(d->node_guid, "0e42:a1ff:fe00:0001");
  ASSERT_EQ(d->ports.size(), 1u);
  const RdmaPort& p = d->ports[0];
  EXPECT_EQ(p.num, 1);
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.state_num, 4);
  EXPECT_EQ(p.phys_state, "LinkUp");
  EXPECT_EQ(p.phys_state_num, 5);
  EXPECT_EQ(p.link_layer, "Ethernet");
}

TEST_F(RdmaTest, GidTableSkipsZeroEntries) {
  auto d = readRdmaDevice(sysfs_, "mlx5_0");
  ASSERT_TRUE(d.ok());
  const auto& gids = d->ports[0].gids;  // 8 entries written, 2 in use
  ASSERT_EQ(gids.size(), 2u);
  EXPECT_EQ(gids[0].index, 0);
  EXPECT_EQ(gids[0].gid, kGid);
  EXPECT_EQ(gids[0].type, "IB/RoCE v1");
  EXPECT_EQ(gids[1].type, "RoCE v2");
  EXPECT_EQ(gids[1].ndev, "ens1f0");
}

TEST_F(RdmaTest, CharDevicesWithNumbers) {
  auto d = readRdmaDevice(sysfs_, "mlx5_0");
  ASSERT_TRUE(d.ok());
  const auto* uverbs = findChar(*d, "uverbs3");
  ASSERT_NE(uverbs, nullptr);
  EXPECT_EQ(uverbs->dev_path, "/dev/infiniband/uverbs3");
  EXPECT_EQ(uverbs->major, 231);
  EXPECT_EQ(uverbs->minor, 195);
  const auto* umad = findChar(*d, "umad2");
  ASSERT_NE(umad, nullptr);
  EXPECT_EQ(umad->minor, 2);
  const auto* issm = findChar(*d, "issm2");
  ASSERT_NE(issm, nullptr);
  EXPECT_EQ(issm->minor, 66);
  const auto* cm = findChar(*d, "rdma_cm");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->dev_path, "/dev/infiniband/rdma_cm");
  EXPECT_EQ(d->char_devices.size(), 4u);
}

TEST_F(RdmaTest, CharDevicesFoundUnderFunctionWithoutClassLinks) {
  tree_.remove("/sys/class/infiniband_verbs/uverbs3");
  tree_.remove("/sys/class/infiniband_mad/umad2");
  auto d = readRdmaDevice(sysfs_, "mlx5_0");
  ASSERT_TRUE(d.ok());
  EXPECT_NE(findChar(*d, "uverbs3"), nullptr);
  EXPECT_NE(findChar(*d, "umad2"), nullptr);
}

TEST_F(RdmaTest, PfWithRdmaButNoVfs) {
  auto devs = rdmaDevicesOf(sysfs_, pci("0000:81:00.0"));
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].name, "mlx5_0");
}

TEST_F(RdmaTest, DownPort) {
  tree_.setRdmaPortActive("mlx5_0", 1, false);
  auto d = readRdmaDevice(sysfs_, "mlx5_0");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ports[0].state, "DOWN");
  EXPECT_EQ(d->ports[0].state_num, 1);
  EXPECT_EQ(d->ports[0].phys_state, "Disabled");
}

TEST_F(RdmaTest, SoftRoceBelongsToItsNetdevsFunction) {
  // rxe0 on top of a netdev of another function 0000:82:00.0 (an igb-like NIC).
  const auto rp2 = tree_.addBridge("/sys/devices/pci0000:80", {.address = pci("0000:80:02.0")});
  tree_.addFunction(
      rp2, {.address = pci("0000:82:00.0"), .vendor = "8086", .device = "10c9", .driver = "igb"});
  tree_.addNetdev(pci("0000:82:00.0"), {.name = "eth1", .ifindex = 7});
  tree_.addSoftRdma({.name = "rxe0", .uverbs = 9}, "eth1");

  auto d = readRdmaDevice(sysfs_, "rxe0");
  ASSERT_TRUE(d.ok()) << d.error().msg;
  EXPECT_TRUE(d->is_software);
  EXPECT_EQ(d->parent_netdev, "eth1");
  EXPECT_EQ(d->pci, pci("0000:82:00.0"));
  EXPECT_NE(findChar(*d, "uverbs9"), nullptr);

  auto devs = rdmaDevicesOf(sysfs_, pci("0000:82:00.0"));
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].name, "rxe0");
  EXPECT_EQ(rdmaDevicesOf(sysfs_, pci("0000:81:00.0")).size(), 1u);  // just mlx5_0
}

TEST_F(RdmaTest, SoftRoceOnVirtualNetdevHasNoPci) {
  tree_.addVirtualNetdev({.name = "veth0", .ifindex = 20});
  tree_.addSoftRdma({.name = "rxe1"}, "veth0");
  auto d = readRdmaDevice(sysfs_, "rxe1");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->pci.has_value());
  EXPECT_EQ(d->parent_netdev, "veth0");
}

TEST_F(RdmaTest, ListsAndRejectsBadNames) {
  EXPECT_EQ(listRdmaDevices(sysfs_), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(readRdmaDevice(sysfs_, "mlx5_9").error().code, ErrorCode::kDeviceNotFound);
  EXPECT_EQ(readRdmaDevice(sysfs_, "../x").error().code, ErrorCode::kInvalidConfig);
}

// `rdma dev set mlx5_1 name <bytes>` takes bytes that are not UTF-8: such a device is left out
// of discovery, from the class listing and from under its function.
TEST_F(RdmaTest, ANameThatIsNotPrintableAsciiIsLeftOut) {
  tree_.addRdmaDevice(pci("0000:81:00.0"), {.name = "mlx5_\xff"});
  EXPECT_EQ(listRdmaDevices(sysfs_), std::vector<std::string>{"mlx5_0"});
  std::vector<std::string> under;
  for (const RdmaDevice& d : rdmaDevicesUnder(sysfs_, pci("0000:81:00.0"))) under.push_back(d.name);
  EXPECT_EQ(under, std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(readRdmaDevice(sysfs_, "mlx5_\xff").error().code, ErrorCode::kInvalidConfig);
}

TEST_F(RdmaTest, BrokenClassLinkIsDeviceNotFound) {
  tree_.symlink("/sys/class/infiniband/mlx5_7", "/sys/devices/pci0000:80/0000:80:01.0/x/mlx5_7");
  EXPECT_EQ(readRdmaDevice(sysfs_, "mlx5_7").error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(RdmaTest, RebindingToVfioRemovesRdmaDevice) {
  tree_.bindDriver(pci("0000:81:00.0"), "vfio-pci");
  EXPECT_TRUE(rdmaDevicesOf(sysfs_, pci("0000:81:00.0")).empty());
  EXPECT_TRUE(listRdmaDevices(sysfs_).empty());
}

}  // namespace
}  // namespace rdmanet
