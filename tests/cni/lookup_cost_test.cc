// The CNI's own device lookup (resolveDevice and the RDMA devices it hands the pod) costs sysfs
// operations that do not grow with the node beyond the PF's own VFs: on 128- and 1016-VF nodes of
// every RDMA shape (tests/simnode/scale_shapes.h), counted through the Sysfs seam.
#include <gtest/gtest.h>

#include <algorithm>

#include "cni/conf/netconf.h"
#include "cni/modes/mode.h"
#include "cni/modes/rdma_attach.h"
#include "tests/cni/plugin_fixture.h"
#include "tests/fakes/scan_cost.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet::cni {
namespace {

using sim::ScaleShape;

class LookupCostTest : public ::testing::TestWithParam<ScaleShape> {
 protected:
  // One ADD's lookups for `netconf` on the node at `root`: the device, then its RDMA devices.
  static SysfsCost lookup(const std::filesystem::path& root, const std::string& netconf) {
    return sysfsCost(root, [&](const Sysfs& sysfs) {
      FakeKernel kernel;
      FakeNetlink host(kernel);
      FakeNetnsRunner runner(kernel);
      testing::FakeIpam ipam;
      Logger log;
      PluginDeps deps{.host = host,
                      .runner = runner,
                      .ipam = ipam,
                      .sysfs = sysfs,
                      .store = StateStore("/nonexistent"),
                      .log = log};
      auto conf = parseNetConf(netconf, Command::kAdd, CniArgs{});
      ASSERT_TRUE(conf.ok()) << conf.error().msg;
      auto dev = resolveDevice(*conf, deps);
      ASSERT_TRUE(dev.ok()) << dev.error().msg;
      (void)rdmaDevicesFor(deps, *conf, *dev);
    });
  }

  void expectFlat(std::string_view what, const std::string& small_conf,
                  const std::string& big_conf) {
    expectLinear(fmt::format("{} CNI {}", sim::shapeName(GetParam()), what),
                 lookup(sim::sharedScaleTree(GetParam(), kSmallVfsPerPf).root(), small_conf),
                 lookup(sim::sharedScaleTree(GetParam(), kBigVfsPerPf).root(), big_conf));
  }

  // The last VF of the first PF, and the first PF's netdev, on a node with `vfs` VFs per PF.
  static const sim::BuiltNetdev& netdev(ScaleShape shape, int vfs, bool vf) {
    const auto& nds = sim::sharedScaleTree(shape, vfs).built.netdevs;
    const std::string want = vf ? fmt::format("ens1f0v{}", vfs - 1) : "ens1f0";
    auto it = std::find_if(nds.begin(), nds.end(),
                           [&](const sim::BuiltNetdev& n) { return n.name == want; });
    if (it == nds.end()) throw std::runtime_error("no netdev " + want);
    return *it;
  }
  static std::string conf(std::string_view body) {
    return fmt::format(R"({{"cniVersion": "1.1.0", "name": "rdma", "type": "rdmanet", {}}})", body);
  }
};

TEST_P(LookupCostTest, SriovLookupIsLinear) {
  auto c = [&](int vfs) {
    return conf(fmt::format(R"("mode": "sriov", "deviceID": "{}")",
                            netdev(GetParam(), vfs, true).pci.str()));
  };
  expectFlat("sriov", c(kSmallVfsPerPf), c(kBigVfsPerPf));
}

TEST_P(LookupCostTest, MacvlanLookupIsLinear) {
  // With a device-info file to write, which is when a macvlan ADD reads the PF's sysfs at all.
  const std::string c = conf(R"("mode": "macvlan", "master": "ens1f0",
      "runtimeConfig": {"CNIDeviceInfoFile": "/var/run/k8s.cni.cncf.io/devinfo/cni/x"})");
  expectFlat("macvlan", c, c);
}

TEST_P(LookupCostTest, HostDeviceLookupIsLinear) {
  auto c = [&](int vfs) {
    return conf(fmt::format(R"("mode": "host-device", "device": "{}")",
                            netdev(GetParam(), vfs, true).name));
  };
  expectFlat("host-device", c(kSmallVfsPerPf), c(kBigVfsPerPf));
}

INSTANTIATE_TEST_SUITE_P(Shapes, LookupCostTest, ::testing::ValuesIn(sim::kScaleShapes),
                         [](const auto& info) { return sim::shapeIdentifier(info.param); });

}  // namespace
}  // namespace rdmanet::cni
