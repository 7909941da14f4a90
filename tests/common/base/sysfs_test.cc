#include "common/base/sysfs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace rdmanet {
namespace {

class SysfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("sysfs_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "sys/devices/pci0000:80/0000:80:00.0/0000:81:00.0");
    fs::create_directories(root_ / "sys/bus/pci/devices");
    fs::create_directories(root_ / "sys/bus/pci/drivers/igb");
    write("sys/devices/pci0000:80/0000:80:00.0/0000:81:00.0/numa_node", "1\n");
    write("sys/devices/pci0000:80/0000:80:00.0/0000:81:00.0/class", "0x020000\n");
    fs::create_symlink("../../../devices/pci0000:80/0000:80:00.0/0000:81:00.0",
                       root_ / "sys/bus/pci/devices/0000:81:00.0");
    fs::create_symlink("../../../../bus/pci/drivers/igb",
                       root_ / "sys/devices/pci0000:80/0000:80:00.0/0000:81:00.0/driver");
    fs::create_symlink("../nowhere", root_ / "sys/bus/pci/devices/0000:82:00.0");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& content) {
    std::ofstream(root_ / rel) << content;
  }
  fs::path root_;
};

TEST_F(SysfsTest, ReadsAttributesBelowTheRoot) {
  Sysfs s(root_);
  EXPECT_EQ(*s.read("/sys/bus/pci/devices/0000:81:00.0/numa_node"), "1");
  EXPECT_EQ(s.readInt("/sys/bus/pci/devices/0000:81:00.0/numa_node"), 1);
  EXPECT_EQ(s.readInt("/sys/bus/pci/devices/0000:81:00.0/class"), 0x020000);
  EXPECT_TRUE(s.exists("/sys/bus/pci/devices/0000:81:00.0"));
  EXPECT_EQ(s.path("/sys/class"), root_ / "sys/class");
}

TEST_F(SysfsTest, MissingAttributeIsDeviceNotFound) {
  Sysfs s(root_);
  auto r = s.read("/sys/bus/pci/devices/0000:81:00.0/sriov_totalvfs");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_FALSE(s.readOpt("/sys/nope").has_value());
  EXPECT_FALSE(s.readInt("/sys/nope").has_value());
}

TEST_F(SysfsTest, ResolvesRelativeLinksToInTreePaths) {
  Sysfs s(root_);
  EXPECT_EQ(s.resolveLink("/sys/bus/pci/devices/0000:81:00.0"),
            "/sys/devices/pci0000:80/0000:80:00.0/0000:81:00.0");
  EXPECT_EQ(s.linkName("/sys/bus/pci/devices/0000:81:00.0/driver"), "igb");
  EXPECT_FALSE(s.resolveLink("/sys/bus/pci/devices/0000:81:00.0/numa_node").has_value());
}

TEST_F(SysfsTest, BrokenLinkResolvesLexicallyButDoesNotExist) {
  Sysfs s(root_);
  EXPECT_EQ(s.resolveLink("/sys/bus/pci/devices/0000:82:00.0"), "/sys/bus/pci/nowhere");
  EXPECT_FALSE(s.exists("/sys/bus/pci/devices/0000:82:00.0"));
}

TEST_F(SysfsTest, ListsSortedAndEmptyForMissingDirs) {
  Sysfs s(root_);
  EXPECT_EQ(s.list("/sys/bus/pci/devices"),
            (std::vector<std::string>{"0000:81:00.0", "0000:82:00.0"}));
  EXPECT_TRUE(s.list("/sys/class/net").empty());
}

TEST_F(SysfsTest, InTreeRejectsPathsOutsideTheRoot) {
  Sysfs s(root_);
  EXPECT_EQ(s.inTree(root_ / "sys/class"), "/sys/class");
  EXPECT_FALSE(s.inTree(root_.parent_path() / "other").has_value());
}

}  // namespace
}  // namespace rdmanet
