// The device -> pod map's rule for Soft-RoCE: an rxe on an upper (ipvlan, macvlan) of the pod's
// own interface, moved to the host's netns, is the pod's. The trees have the kernel's shape: the
// upper's iflink is its lower's ifindex in the pod's netns, and an upper whose lower is in the
// same netns has a lower_<name> link.
#include "deviceplugin/podnet/pod_devices.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/deviceplugin/test_node.h"
#include "tests/simnode/sim_tree.h"

namespace rdmanet::podnet {
namespace {

namespace fs = std::filesystem;

class PodDevicesTest : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(root_); }

  // A netdev in the host's netns whose lower has ifindex `lower` (0: none), carrying rxe `rdma`.
  void softOnUpper(const std::string& netdev, int ifindex, int lower, const std::string& rdma) {
    tree_.addVirtualNetdev({.name = netdev, .ifindex = ifindex, .iflink = lower});
    tree_.addSoftRdma({.name = rdma}, netdev);
  }

  static PodAttachment attachment(const std::string& pod, const std::string& mode,
                                  int pod_ifindex) {
    return PodAttachment{.container_id = "c-" + pod,
                         .ifname = "net1",
                         .netns = "/var/run/netns/" + pod,
                         .pod_namespace = "ml",
                         .pod_name = pod,
                         .mode = mode,
                         .pod_ifindex = pod_ifindex};
  }

  fs::path root_ = dp::testing::makeTempDir("poddevices");
  sim::SimTree tree_{root_};
  Sysfs sysfs_{root_};
};

TEST_F(PodDevicesTest, ASoftRoceDeviceOnAnUpperOfThePodsInterfaceIsThePods) {
  softOnUpper("rsla", 20, 7, "rxsa");
  softOnUpper("rslb", 21, 8, "rxsb");
  const auto devs = resolvePodDevices(
      sysfs_,
      {attachment("a", "sriov", 7), attachment("b", "sriov", 8), attachment("idle", "sriov", 9)});
  ASSERT_EQ(devs.size(), 3u);
  EXPECT_EQ(devs[0].rdma_device, "rxsa");
  EXPECT_EQ(devs[1].rdma_device, "rxsb");
  EXPECT_EQ(devs[2].rdma_device, "");
  // It lives in the host's netns: read from the host's sysfs, not through the pod's.
  EXPECT_FALSE(devs[0].rdma_in_pod_netns);
}

TEST_F(PodDevicesTest, ASoftRoceDeviceOnAHostDeviceIsNotAPodsWhateverItsIfindex) {
  // rxe on a plain host netdev (iflink = its own ifindex 7), and on a macvlan of a host device
  // (its lower, ifindex 3, is in this netns: a lower_ link), which names 9 as its iflink.
  softOnUpper("eth7", 7, 0, "rxe7");
  tree_.addVirtualNetdev({.name = "eth3", .ifindex = 3});
  softOnUpper("mv0", 22, 9, "rxmv");
  tree_.symlink("/sys/class/net/mv0/lower_eth3", "/sys/devices/virtual/net/eth3");
  const auto devs =
      resolvePodDevices(sysfs_, {attachment("a", "sriov", 7), attachment("b", "sriov", 9)});
  EXPECT_EQ(devs[0].rdma_device, "");
  EXPECT_EQ(devs[1].rdma_device, "");
}

TEST_F(PodDevicesTest, TwoPodsRecordingOneIfindexGetNeitherPodsSoftDevice) {
  // Ifindexes are per netns: the upper's lower could be either pod's interface.
  softOnUpper("rsla", 20, 7, "rxsa");
  const auto devs =
      resolvePodDevices(sysfs_, {attachment("a", "sriov", 7), attachment("b", "sriov", 7)});
  EXPECT_EQ(devs[0].rdma_device, "");
  EXPECT_EQ(devs[1].rdma_device, "");
}

TEST_F(PodDevicesTest, AnAttachmentOfAnOlderCniWithoutItsIfindexGetsNoSoftDevice) {
  softOnUpper("rsla", 20, 7, "rxsa");
  const auto devs = resolvePodDevices(sysfs_, {attachment("a", "sriov", 0)});
  EXPECT_EQ(devs[0].rdma_device, "");
}

TEST_F(PodDevicesTest, AMacvlanPodsOwnSoftDeviceTakesThePlaceOfItsMastersShared) {
  // The master carries an rxe every macvlan pod on it shares; pod a has one of its own.
  softOnUpper("eth5", 5, 0, "rxe5");
  softOnUpper("rsla", 20, 7, "rxsa");
  auto a = attachment("a", "macvlan", 7);
  auto b = attachment("b", "macvlan", 8);
  a.host_netdev = b.host_netdev = "eth5";
  const auto devs = resolvePodDevices(sysfs_, {a, b});
  EXPECT_EQ(devs[0].rdma_device, "rxsa");
  EXPECT_EQ(devs[1].rdma_device, "rxe5");
  EXPECT_EQ(devs[0].port_netdev, "eth5");  // the port behind it is still the master
}

TEST_F(PodDevicesTest, ADeviceMovedIntoThePodStaysThePodsDevice) {
  softOnUpper("rsla", 20, 7, "rxsa");
  auto a = attachment("a", "sriov", 7);
  a.rdma_in_pod = {"mlx5_3"};
  const auto devs = resolvePodDevices(sysfs_, {a});
  EXPECT_EQ(devs[0].rdma_device, "mlx5_3");
  EXPECT_TRUE(devs[0].rdma_in_pod_netns);
}

}  // namespace
}  // namespace rdmanet::podnet
