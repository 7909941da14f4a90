#include "common/inventory/netdev.h"

#include <gtest/gtest.h>

#include "tests/common/inventory/refusals.h"
#include "tests/simnode/sim_tree.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

using sim::pci;

// PF 0000:81:00.0 with VFs 0000:81:00.2 (netdev) and 0000:81:00.3 (vfio-pci, none).
class NetdevTest : public ::testing::Test {
 protected:
  NetdevTest() : tree_(dir_.path()), sysfs_(dir_.path()) {
    const auto rp = tree_.addBridge(tree_.addHostBridge(0, 0x80), {.address = pci("0000:80:01.0")});
    tree_.addFunction(rp, {.address = pci("0000:81:00.0"), .sriov_totalvfs = 4, .sriov_numvfs = 2});
    tree_.addFunction(rp, {.address = pci("0000:81:00.2"), .device = "101e"});
    tree_.addFunction(rp, {.address = pci("0000:81:00.3"), .device = "101e", .driver = "vfio-pci"});
    tree_.linkVf(pci("0000:81:00.0"), pci("0000:81:00.2"), 0);
    tree_.linkVf(pci("0000:81:00.0"), pci("0000:81:00.3"), 1);
    tree_.addNetdev(pci("0000:81:00.0"), {.name = "ens1f0",
                                          .ifindex = 4,
                                          .mac = "0c:42:a1:00:00:01",
                                          .mtu = 9000,
                                          .speed_mbps = 200000});
    tree_.addNetdev(pci("0000:81:00.2"),
                    {.name = "ens1f0v0", .ifindex = 9, .mac = "0c:42:a1:00:00:02"});
  }

  sim::TempDir dir_;
  sim::SimTree tree_;
  Sysfs sysfs_;
};

TEST_F(NetdevTest, ReadsEveryAttributeByName) {
  auto n = readNetdev(sysfs_, "ens1f0");
  ASSERT_TRUE(n.ok()) << n.error().msg;
  EXPECT_EQ(n->name, "ens1f0");
  EXPECT_EQ(n->ifindex, 4);
  EXPECT_EQ(n->mac, "0c:42:a1:00:00:01");
  EXPECT_EQ(n->mtu, 9000);
  EXPECT_EQ(n->operstate, "up");
  EXPECT_EQ(n->speed_mbps, 200000);
  EXPECT_EQ(n->link_type, LinkType::kEther);
  EXPECT_EQ(n->pci, pci("0000:81:00.0"));
}

TEST_F(NetdevTest, NetdevsOfAFunction) {
  auto v = netdevsOf(sysfs_, pci("0000:81:00.2"));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "ens1f0v0");
  EXPECT_EQ(v[0].ifindex, 9);
  EXPECT_EQ(v[0].pci, pci("0000:81:00.2"));
  EXPECT_EQ(netdevNamesOf(sysfs_, pci("0000:81:00.0")), std::vector<std::string>{"ens1f0"});
}

TEST_F(NetdevTest, VfBoundToVfioHasNoNetdev) {
  EXPECT_TRUE(netdevNamesOf(sysfs_, pci("0000:81:00.3")).empty());
  EXPECT_TRUE(netdevsOf(sysfs_, pci("0000:81:00.3")).empty());
}

TEST_F(NetdevTest, VfWhosePfHasNoNetdevStillHasItsOwn) {
  tree_.removeNetdev("ens1f0");
  EXPECT_TRUE(netdevsOf(sysfs_, pci("0000:81:00.0")).empty());
  auto v = netdevsOf(sysfs_, pci("0000:81:00.2"));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "ens1f0v0");
  EXPECT_FALSE(readNetdev(sysfs_, "ens1f0").ok());
}

TEST_F(NetdevTest, RebindingToVfioRemovesTheNetdev) {
  tree_.bindDriver(pci("0000:81:00.2"), "vfio-pci");
  EXPECT_TRUE(netdevsOf(sysfs_, pci("0000:81:00.2")).empty());
  EXPECT_EQ(readNetdev(sysfs_, "ens1f0v0").error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(NetdevTest, DownLinkHasNoSpeed) {
  tree_.addNetdev(pci("0000:81:00.3"), {.name = "down0", .operstate = "down", .speed_mbps = {}});
  auto n = readNetdev(sysfs_, "down0");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->operstate, "down");
  EXPECT_FALSE(n->speed_mbps.has_value());
}

TEST_F(NetdevTest, InfinibandType) {
  tree_.addNetdev(pci("0000:81:00.3"), {.name = "ib0", .type = 32});
  EXPECT_EQ(readNetdev(sysfs_, "ib0")->link_type, LinkType::kInfiniband);
}

TEST_F(NetdevTest, VirtualNetdevHasNoPciFunction) {
  tree_.addVirtualNetdev({.name = "veth0", .ifindex = 12, .type = 1});
  auto n = readNetdev(sysfs_, "veth0");
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->pci.has_value());
  EXPECT_EQ(n->ifindex, 12);
}

TEST_F(NetdevTest, PciFoundFromPathWhenDeviceLinkMissing) {
  tree_.remove("/sys/class/net/ens1f0/device");
  EXPECT_EQ(readNetdev(sysfs_, "ens1f0")->pci, pci("0000:81:00.0"));
}

TEST_F(NetdevTest, MissingNetdevIsDeviceNotFound) {
  EXPECT_EQ(readNetdev(sysfs_, "nope0").error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(NetdevTest, BrokenClassLinkIsDeviceNotFound) {
  tree_.symlink("/sys/class/net/gone0", "/sys/devices/virtual/net/gone0");
  EXPECT_EQ(readNetdev(sysfs_, "gone0").error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(NetdevTest, InvalidNameIsInvalidConfig) {
  EXPECT_EQ(readNetdev(sysfs_, "../../etc").error().code, ErrorCode::kInvalidConfig);
}

TEST_F(NetdevTest, ListsClassNetSorted) {
  EXPECT_EQ(listNetdevs(sysfs_), (std::vector<std::string>{"ens1f0", "ens1f0v0"}));
}

// A VF a tenant renamed to bytes that are not UTF-8 (0xff) while it was in its pod, back on the
// host: the name is left out of discovery and reported; the function's other netdev stays.
TEST_F(NetdevTest, ANameThatIsNotPrintableAsciiIsLeftOutAndReported) {
  const std::string bad = "v\xff\xfe";
  tree_.addNetdev(pci("0000:81:00.2"), {.name = bad, .ifindex = 12});
  testing::Refusals refusals;
  const Sysfs observed(dir_.path(), &refusals);
  EXPECT_EQ(netdevNamesOf(observed, pci("0000:81:00.2")), std::vector<std::string>{"ens1f0v0"});
  auto v = netdevsOf(observed, pci("0000:81:00.2"));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "ens1f0v0");
  EXPECT_EQ(listNetdevs(observed), (std::vector<std::string>{"ens1f0", "ens1f0v0"}));
  EXPECT_EQ(readNetdev(observed, bad).error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(refusals.seen, (std::vector<std::string>{
                               "/sys/bus/pci/devices/0000:81:00.2/net/" + bad,
                               "/sys/bus/pci/devices/0000:81:00.2/net/" + bad,
                               "/sys/class/net/" + bad,
                           }));
}

TEST(IfNameTest, KernelRules) {
  struct Case {
    std::string name;
    bool valid;
  };
  for (const auto& c : std::vector<Case>{{"eth0", true},
                                         {"ens1f0v3", true},
                                         {"a23456789012345", true},
                                         {"a234567890123456", false},
                                         {"", false},
                                         {".", false},
                                         {"..", false},
                                         {"a/b", false},
                                         {"a:b", false},
                                         {"a b", false},
                                         {"a\tb", false},
                                         {std::string("a\0b", 3), false},
                                         // Printable ASCII only: what the kernel also takes
                                         // (a tenant's rename) is refused.
                                         {"ens1\xff", false},
                                         {"\xc3\xa9th0", false},  // valid UTF-8, still refused
                                         {"a\x7f", false},
                                         {"a\x1b[31m", false},
                                         {"a-b_c.d@e", true}}) {
    EXPECT_EQ(isValidIfName(c.name), c.valid) << "name: \"" << c.name << "\"";
  }
}

}  // namespace
}  // namespace rdmanet
