#include "common/inventory/pci.h"

#include <gtest/gtest.h>

#include "tests/simnode/sim_tree.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

using sim::pci;

// One root port 0000:80:01.0 under pci0000:80; functions hang below it on bus 0x81.
class PciTest : public ::testing::Test {
 protected:
  PciTest() : tree_(dir_.path()), sysfs_(dir_.path()) {
    rp_ = tree_.addBridge(
        tree_.addHostBridge(0, 0x80),
        {.address = pci("0000:80:01.0"), .secondary_bus = 0x81, .subordinate_bus = 0x81});
  }
  // A PF with `vfs` VFs at 0000:81:00.2, 00.3, ... bound to `vf_driver`.
  void addPfWithVfs(int vfs, const std::string& vf_driver = "mlx5_core") {
    tree_.addFunction(rp_, {.address = pci("0000:81:00.0"),
                            .numa_node = 1,
                            .iommu_group = 42,
                            .sriov_totalvfs = 8,
                            .sriov_numvfs = vfs});
    for (int i = 0; i < vfs; ++i) {
      const PciAddress vf{.domain = 0, .bus = 0x81, .device = 0, .function = uint8_t(2 + i)};
      tree_.addFunction(rp_,
                        {.address = vf, .device = "101e", .driver = vf_driver, .numa_node = 1});
      tree_.linkVf(pci("0000:81:00.0"), vf, i);
    }
  }

  sim::TempDir dir_;
  sim::SimTree tree_;
  Sysfs sysfs_;
  std::string rp_;
};

TEST_F(PciTest, ReadsAttributesOfAFunction) {
  addPfWithVfs(0);
  auto f = readPciFunction(sysfs_, pci("0000:81:00.0"));
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->sysfs_dir, "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0");
  EXPECT_EQ(f->vendor, "15b3");
  EXPECT_EQ(f->device, "101d");
  EXPECT_EQ(f->class_code, 0x020000u);
  EXPECT_TRUE(f->isNetwork());
  EXPECT_EQ(f->driver, "mlx5_core");
  EXPECT_EQ(f->numa_node, 1);
  EXPECT_EQ(f->iommu_group, 42);
}

TEST_F(PciTest, ListsFunctionsSortedIncludingBridges) {
  addPfWithVfs(2);
  auto all = listPciFunctions(sysfs_);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0], pci("0000:80:01.0"));
  EXPECT_EQ(all[1], pci("0000:81:00.0"));
  EXPECT_EQ(all[3], pci("0000:81:00.3"));
}

TEST_F(PciTest, MissingFunctionIsDeviceNotFound) {
  auto f = readPciFunction(sysfs_, pci("0000:81:00.0"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(PciTest, MissingNumaNodeReadsMinusOne) {
  addPfWithVfs(0);
  tree_.remove("/sys/bus/pci/devices/0000:81:00.0/numa_node");
  auto f = readPciFunction(sysfs_, pci("0000:81:00.0"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->numa_node, -1);
}

TEST_F(PciTest, NumaNodeMinusOneFromPlatformStaysMinusOne) {
  addPfWithVfs(0);
  tree_.writeAttr("/sys/bus/pci/devices/0000:81:00.0/numa_node", "-1");
  EXPECT_EQ(readPciFunction(sysfs_, pci("0000:81:00.0"))->numa_node, -1);
}

TEST_F(PciTest, UnboundFunctionHasNoDriver) {
  tree_.addFunction(rp_, {.address = pci("0000:81:00.0"), .driver = ""});
  auto f = readPciFunction(sysfs_, pci("0000:81:00.0"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->driver, "");
  EXPECT_FALSE(f->iommu_group.has_value());
}

TEST_F(PciTest, PfListsItsVfsInIndexOrder) {
  addPfWithVfs(3);
  auto pf = readPciFunction(sysfs_, pci("0000:81:00.0"));
  ASSERT_TRUE(pf.ok());
  EXPECT_TRUE(pf->isPf());
  EXPECT_FALSE(pf->isVf());
  EXPECT_EQ(pf->sriov_totalvfs, 8);
  EXPECT_EQ(pf->sriov_numvfs, 3);
  ASSERT_EQ(pf->vfs.size(), 3u);
  EXPECT_EQ(pf->vfs[0], pci("0000:81:00.2"));
  EXPECT_EQ(pf->vfs[2], pci("0000:81:00.4"));
}

TEST_F(PciTest, VfKnowsItsPfAndIndex) {
  addPfWithVfs(3);
  auto vf = readPciFunction(sysfs_, pci("0000:81:00.3"));
  ASSERT_TRUE(vf.ok());
  EXPECT_TRUE(vf->isVf());
  EXPECT_EQ(vf->pf, pci("0000:81:00.0"));
  EXPECT_EQ(vf->vf_index, 1);
  EXPECT_EQ(vf->device, "101e");
}

TEST_F(PciTest, VfIndexComesFromVirtfnLinkNotFromAddressOrder) {
  // Index 0 points at the higher address: the kernel numbers VFs, addresses only follow.
  tree_.addFunction(rp_, {.address = pci("0000:81:00.0"), .sriov_totalvfs = 2, .sriov_numvfs = 2});
  tree_.addFunction(rp_, {.address = pci("0000:81:00.2"), .device = "101e"});
  tree_.addFunction(rp_, {.address = pci("0000:81:00.3"), .device = "101e"});
  tree_.linkVf(pci("0000:81:00.0"), pci("0000:81:00.3"), 0);
  tree_.linkVf(pci("0000:81:00.0"), pci("0000:81:00.2"), 1);
  EXPECT_EQ(readPciFunction(sysfs_, pci("0000:81:00.2"))->vf_index, 1);
  EXPECT_EQ(readPciFunction(sysfs_, pci("0000:81:00.3"))->vf_index, 0);
}

TEST_F(PciTest, PfWithSriovButNoVfsEnabled) {
  addPfWithVfs(0);
  auto pf = readPciFunction(sysfs_, pci("0000:81:00.0"));
  ASSERT_TRUE(pf.ok());
  EXPECT_TRUE(pf->isPf());
  EXPECT_EQ(pf->sriov_numvfs, 0);
  EXPECT_TRUE(pf->vfs.empty());
}

TEST_F(PciTest, VfBoundToVfioReportsThatDriver) {
  addPfWithVfs(2, "vfio-pci");
  auto vf = readPciFunction(sysfs_, pci("0000:81:00.2"));
  ASSERT_TRUE(vf.ok());
  EXPECT_EQ(vf->driver, "vfio-pci");
  EXPECT_EQ(vf->vf_index, 0);
}

TEST_F(PciTest, BrokenBusEntryIsSkippedAndNotFound) {
  addPfWithVfs(0);
  // A device removed while its bus link lingers: the link dangles.
  tree_.symlink("/sys/bus/pci/devices/0000:82:00.0",
                "/sys/devices/pci0000:80/0000:80:02.0/0000:82:00.0");
  auto all = listPciFunctions(sysfs_);
  EXPECT_EQ(std::count(all.begin(), all.end(), pci("0000:82:00.0")), 0);
  EXPECT_EQ(readPciFunction(sysfs_, pci("0000:82:00.0")).error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(PciTest, BrokenVirtfnLinkIsSkipped) {
  addPfWithVfs(2);
  tree_.symlink("/sys/bus/pci/devices/0000:81:00.0/virtfn1",
                "/sys/devices/pci0000:80/0000:80:01.0/0000:81:07.7");
  auto pf = readPciFunction(sysfs_, pci("0000:81:00.0"));
  ASSERT_TRUE(pf.ok());
  ASSERT_EQ(pf->vfs.size(), 1u);
  EXPECT_EQ(pf->vfs[0], pci("0000:81:00.2"));
}

TEST_F(PciTest, BrokenPhysfnLinkMeansNoPf) {
  addPfWithVfs(1);
  tree_.symlink("/sys/bus/pci/devices/0000:81:00.2/physfn",
                "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.6");
  auto vf = readPciFunction(sysfs_, pci("0000:81:00.2"));
  ASSERT_TRUE(vf.ok());
  EXPECT_FALSE(vf->isVf());
  EXPECT_FALSE(vf->vf_index.has_value());
}

TEST_F(PciTest, NonAddressEntriesInBusDirAreIgnored) {
  addPfWithVfs(0);
  tree_.writeAttr("/sys/bus/pci/devices/not-a-bdf", "x");
  EXPECT_EQ(listPciFunctions(sysfs_).size(), 2u);
}

}  // namespace
}  // namespace rdmanet
