// Node scans cost sysfs operations linear in the node's devices, in every shape real drivers
// give an RDMA NIC's functions (tests/simnode/scale_shapes.h), and still find what each shape
// holds. 16 and 127 VFs per PF: 128 and 1016 VFs on 8 PFs.
#include "tests/fakes/scan_cost.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/inventory/node.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet {
namespace {

using sim::ScaleShape;

class ScanCostTest : public ::testing::TestWithParam<ScaleShape> {};

TEST_P(ScanCostTest, FullScanIsLinear) {
  expectLinearOnShape(GetParam(), "scanNode", [](const Sysfs& s) { (void)scanNode(s); });
  expectLinearOnShape(GetParam(), "scanNode without GIDs",
                      [](const Sysfs& s) { (void)scanNode(s, {.gids = false}); });
}

TEST_P(ScanCostTest, PfScanIsLinear) {
  expectLinearOnShape(GetParam(), "scanNode of PFs",
                      [](const Sysfs& s) { (void)scanNode(s, {.vfs = false}); });
}

TEST_P(ScanCostTest, RescanOfOnePfIsLinearInItsVfs) {
  // The first PF has the same address on both sizes.
  const PciAddress pf = sim::sharedScaleTree(GetParam(), kSmallVfsPerPf).built.nics[0].pfs[0];
  expectLinearOnShape(GetParam(), "rescanPf", [&](const Sysfs& s) {
    NodeInventory inv = scanNode(Sysfs(s.root()), {.gids = false});  // not counted
    (void)rescanPf(s, pf, inv, {.gids = false});
  });
}

// Each shape's devices are found where they are, whatever the scan's shortcuts.
TEST_P(ScanCostTest, ScanFindsEachShapesRdmaDevices) {
  const sim::ScaleTree& t = sim::sharedScaleTree(GetParam(), kSmallVfsPerPf);
  const NodeInventory inv = scanNode(Sysfs(t.root()), {.gids = false});
  const bool vfs_have_rdma =
      GetParam() != ScaleShape::kMlx5NoVfRdma && GetParam() != ScaleShape::kVfRdmaInPods;
  size_t pfs = 0, vfs = 0;
  for (const NicFunction& n : inv.nics) {
    const bool vf = n.pci.isVf();
    (vf ? vfs : pfs)++;
    ASSERT_EQ(n.rdma.size(), !vf || vfs_have_rdma ? 1u : 0u) << n.pci.address.str();
    if (n.rdma.empty()) continue;
    const RdmaDevice& d = n.rdma.front();
    EXPECT_EQ(d.is_software, GetParam() == ScaleShape::kRxe) << d.name;
    EXPECT_EQ(d.pci, n.pci.address) << d.name;
    EXPECT_FALSE(d.ports.empty()) << d.name;
    // uverbs (and the shared rdma_cm) found for every device, from its function or the class.
    EXPECT_TRUE(std::any_of(d.char_devices.begin(), d.char_devices.end(),
                            [](const RdmaCharDevice& c) { return c.name.starts_with("uverbs"); }))
        << d.name;
  }
  EXPECT_EQ(pfs, 8u);
  EXPECT_EQ(vfs, 8u * kSmallVfsPerPf);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ScanCostTest, ::testing::ValuesIn(sim::kScaleShapes),
                         [](const auto& info) { return sim::shapeIdentifier(info.param); });

}  // namespace
}  // namespace rdmanet
