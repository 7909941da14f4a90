#include "deviceplugin/dra/apiserver/pcie_root.h"

#include <gtest/gtest.h>

#include "deviceplugin/dra/apiserver/standard_attributes.h"
#include "tests/simnode/sim_tree.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::dra {
namespace {

using sim::pci;

class PcieRootTest : public ::testing::Test {
 protected:
  sim::TempDir dir_;
  sim::SimTree tree_{dir_.path()};
  Sysfs sysfs_{dir_.path()};

  // The upstream rule, computed independently of the code under test: the fully resolved path
  // of /sys/bus/pci/devices/<bdf>, its first component after /sys/devices/.
  std::string byRealpath(const std::string& bdf) {
    const auto real = std::filesystem::canonical(tree_.host("/sys/bus/pci/devices/" + bdf));
    const auto rel = real.lexically_relative(dir_.path() / "sys/devices");
    return rel.begin()->string();
  }
};

TEST_F(PcieRootTest, DeviceBehindASwitchReportsItsHostBridge) {
  auto rc = tree_.addHostBridge(0, 0x80);
  auto rp = tree_.addBridge(rc, {.address = pci("0000:80:01.0")});
  auto up = tree_.addBridge(
      rp, {.address = pci("0000:81:00.0"), .kind = sim::BridgeKind::kSwitchUpstream});
  auto down = tree_.addBridge(
      up, {.address = pci("0000:82:08.0"), .kind = sim::BridgeKind::kSwitchDownstream});
  tree_.addFunction(down, {.address = pci("0000:83:00.1")});
  auto r = pcieRoot(sysfs_, pci("0000:83:00.1"));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "pci0000:80");
  EXPECT_EQ(*r, byRealpath("0000:83:00.1"));
}

TEST_F(PcieRootTest, RootComplexIntegratedDeviceAndOtherDomains) {
  auto rc0 = tree_.addHostBridge(0, 0x00);
  tree_.addFunction(rc0, {.address = pci("0000:00:03.0")});
  auto rc1 = tree_.addHostBridge(0x0001, 0x40);
  auto rp = tree_.addBridge(rc1, {.address = pci("0001:40:02.0")});
  tree_.addFunction(rp, {.address = pci("0001:41:00.0")});
  for (auto [bdf, want] :
       {std::pair{"0000:00:03.0", "pci0000:00"}, std::pair{"0001:41:00.0", "pci0001:40"}}) {
    auto r = pcieRoot(sysfs_, pci(bdf));
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ(*r, want);
    EXPECT_EQ(*r, byRealpath(bdf));
  }
}

TEST_F(PcieRootTest, NicAndGpuShareTheValueOnlyUnderOneRootComplex) {
  auto rc_a = tree_.addHostBridge(0, 0x17);
  auto rc_b = tree_.addHostBridge(0, 0x5d);
  auto rp_a = tree_.addBridge(rc_a, {.address = pci("0000:17:00.0")});
  auto rp_b = tree_.addBridge(rc_b, {.address = pci("0000:5d:00.0")});
  tree_.addFunction(rp_a, {.address = pci("0000:18:00.0")});  // NIC
  tree_.addFunction(rp_a, {.address = pci("0000:18:00.1"),
                           .vendor = "10de",
                           .class_code = 0x030200});  // GPU, same root
  tree_.addFunction(rp_b, {.address = pci("0000:5e:00.0"),
                           .vendor = "10de",
                           .class_code = 0x030200});  // GPU, other root
  auto nic = pcieRoot(sysfs_, pci("0000:18:00.0"));
  auto gpu_same = pcieRoot(sysfs_, pci("0000:18:00.1"));
  auto gpu_other = pcieRoot(sysfs_, pci("0000:5e:00.0"));
  ASSERT_TRUE(nic.ok() && gpu_same.ok() && gpu_other.ok());
  EXPECT_EQ(*nic, *gpu_same);
  EXPECT_NE(*nic, *gpu_other);
}

TEST_F(PcieRootTest, MissingFunctionIsNotFound) {
  auto r = pcieRoot(sysfs_, pci("0000:99:00.0"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(PcieRootTest, LinksOutsideSysDevicesPciOrToAnotherAddressAreRefused) {
  tree_.symlink("/sys/bus/pci/devices/0000:01:00.0", "/sys/devices/platform/soc/0000:01:00.0");
  tree_.symlink("/sys/bus/pci/devices/0000:02:00.0", "/sys/devices/pci0000:00/0000:02:00.1");
  for (const char* bdf : {"0000:01:00.0", "0000:02:00.0"}) {
    auto r = pcieRoot(sysfs_, pci(bdf));
    ASSERT_FALSE(r.ok()) << bdf;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig) << r.error().msg;
  }
}

TEST_F(PcieRootTest, StandardAttributesOfAVf) {
  auto rc = tree_.addHostBridge(0, 0x80);
  auto rp = tree_.addBridge(rc, {.address = pci("0000:80:01.0")});
  tree_.addFunction(rp, {.address = pci("0000:81:00.2"), .numa_node = 1});
  tree_.addFunction(rp, {.address = pci("0000:81:00.3"), .numa_node = std::nullopt});
  DraDevice d{.name = "pci-0000-81-00-2"};
  ASSERT_TRUE(addStandardAttributes(sysfs_, pci("0000:81:00.2"), "rdma/vf", d).ok());
  EXPECT_EQ(d.attributes, (std::map<std::string, AttributeValue>{
                              {"resource.kubernetes.io/pcieRoot", std::string("pci0000:80")},
                              {"resource.kubernetes.io/pciBusID", std::string("0000:81:00.2")},
                              {"resource.kubernetes.io/numaNode", int64_t{1}},
                              {"k8s.cni.cncf.io/deviceID", std::string("0000:81:00.2")},
                              {"k8s.cni.cncf.io/resourceName", std::string("rdma/vf")}}));
  EXPECT_TRUE(validateDevice(d).ok());

  DraDevice no_numa{.name = "pci-0000-81-00-3"};
  ASSERT_TRUE(addStandardAttributes(sysfs_, pci("0000:81:00.3"), "", no_numa).ok());
  EXPECT_FALSE(no_numa.attributes.contains("resource.kubernetes.io/numaNode"));
  EXPECT_FALSE(no_numa.attributes.contains("k8s.cni.cncf.io/resourceName"));

  DraDevice missing{.name = "pci-0000-99-00-0"};
  EXPECT_FALSE(addStandardAttributes(sysfs_, pci("0000:99:00.0"), "rdma/vf", missing).ok());
  EXPECT_TRUE(missing.attributes.empty());
}

}  // namespace
}  // namespace rdmanet::dra
