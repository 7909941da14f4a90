// The device plugin core's sysfs cost on 128- and 1016-VF nodes of every RDMA shape
// (tests/simnode/scale_shapes.h): registration (the first scan and build of the pools), the
// periodic resync, and a uevent's rescan are linear in the node's devices.
#include "tests/fakes/scan_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "deviceplugin/pools/node_pools.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet::dp {
namespace {

using sim::ScaleShape;

class PoolsScanCostTest : public ::testing::TestWithParam<ScaleShape> {
 protected:
  // expectLinear() of work(core) alone on a core that has scanned and built (not counted).
  template <typename Work>
  void expectLinearAfterScan(std::string_view what, Work work) {
    auto scanned = [](const Sysfs& s) {
      auto core = std::make_unique<NodePools>(s, defaultConfig());
      core->rescan();
      (void)core->build();
      return core;
    };
    auto run = [&](std::unique_ptr<NodePools>& core) { work(*core); };
    auto root = [&](int vfs) { return sim::sharedScaleTree(GetParam(), vfs).root(); };
    expectLinear(fmt::format("{} {}", sim::shapeName(GetParam()), what),
                 sysfsCostAfter(root(kSmallVfsPerPf), scanned, run),
                 sysfsCostAfter(root(kBigVfsPerPf), scanned, run));
  }
};

TEST_P(PoolsScanCostTest, RegistrationIsLinear) {
  expectLinearOnShape(GetParam(), "registration", [](const Sysfs& s) {
    NodePools core(s, defaultConfig());
    core.rescan();
    const BuiltPools built = core.build();
    EXPECT_FALSE(built.pools.empty());
  });
}

TEST_P(PoolsScanCostTest, ResyncIsLinear) {
  expectLinearAfterScan("resync", [](NodePools& core) {
    EXPECT_FALSE(core.resync());  // nothing changed: no rescan
    (void)core.build();
  });
}

TEST_P(PoolsScanCostTest, AUeventsRescanIsLinear) {
  const sim::BuiltNetdev& pf =
      sim::sharedScaleTree(GetParam(), kSmallVfsPerPf).built.netdevs.front();
  ASSERT_FALSE(pf.is_vf);
  expectLinearAfterScan("uevent rescan", [&](NodePools& core) {
    const NicFunction* f = core.inventory().nic(pf.pci);
    ASSERT_NE(f, nullptr);
    // The DEVPATH a uevent of the PF's netdev names: its sysfs dir without "/sys".
    EXPECT_FALSE(core.rescanFor({f->pci.sysfs_dir.substr(4) + "/net/" + pf.name}));
    (void)core.build();
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, PoolsScanCostTest, ::testing::ValuesIn(sim::kScaleShapes),
                         [](const auto& info) { return sim::shapeIdentifier(info.param); });

}  // namespace
}  // namespace rdmanet::dp
