// Selectors and pool building on the simulated node's default topology (2 NICs x 2 PFs x 4 VFs,
// every PF and VF with an RDMA device).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/health.h"
#include "deviceplugin/pools/pool.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using testing::TestNode;

class SelectorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { node_ = new TestNode(); }
  static void TearDownTestSuite() {
    delete node_;
    node_ = nullptr;
  }

  // IDs of the vf-mode pool built from `selectors` (a JSON object or list).
  static std::set<std::string> vfPool(const std::string& selectors) {
    auto cfg =
        parseConfig(R"({"resourceList": [{"resourceName": "t", "selectors": )" + selectors + "}]}");
    EXPECT_TRUE(cfg.ok()) << cfg.error().msg;
    if (!cfg.ok()) return {};
    std::set<std::string> ids;
    auto pools = buildPools(*cfg, node_->inventory());
    for (const auto& d : pools[0].devices) ids.insert(d.id);
    return ids;
  }
  static std::string vf(int pf, int vf) { return node_->vf(pf, vf).str(); }
  static std::set<std::string> vfsOf(int pf, std::set<int> which = {0, 1, 2, 3}) {
    std::set<std::string> s;
    for (int i : which) s.insert(vf(pf, i));
    return s;
  }
  static std::set<std::string> allVfs() {
    std::set<std::string> s;
    for (int pf = 0; pf < 4; ++pf) s.merge(vfsOf(pf));
    return s;
  }

  static TestNode* node_;
};

TestNode* SelectorsTest::node_ = nullptr;

TEST_F(SelectorsTest, TableOfSelectors) {
  struct Case {
    std::string name;
    std::string selectors;
    std::set<std::string> want;
  };
  std::string pf1 = node_->pf(1).str();
  const std::vector<Case> cases = {
      {"EmptySelectorTakesEveryVf", "{}", allVfs()},
      {"VendorAndRdma", R"({"vendors": ["15b3"], "isRdma": true})", allVfs()},
      {"VfDeviceId", R"({"devices": ["101e"]})", allVfs()},
      {"PfDeviceIdOffersNothingInVfMode", R"({"devices": ["101d"]})", {}},
      {"OtherVendor", R"({"vendors": ["8086"]})", {}},
      {"Driver", R"({"drivers": ["mlx5_core"]})", allVfs()},
      {"WrongDriver", R"({"drivers": ["vfio-pci"]})", {}},
      {"PfName", R"({"pfNames": ["ens1f0"]})", vfsOf(0)},
      {"PfNameWithVfRange", R"({"pfNames": ["ens1f0#0-1,3"]})", vfsOf(0, {0, 1, 3})},
      {"PfNamesOred", R"({"pfNames": ["ens1f1#0", "ens2f0#3"]})", {vf(1, 0), vf(2, 3)}},
      {"RootDeviceWithRange", fmt::format(R"({{"rootDevices": ["{}#2"]}})", pf1), {vf(1, 2)}},
      {"RootDeviceWhole", fmt::format(R"({{"rootDevices": ["{}"]}})", pf1), vfsOf(1)},
      {"PciAddress", fmt::format(R"({{"pciAddresses": ["{}"]}})", vf(3, 1)), {vf(3, 1)}},
      {"FieldsAnded",
       fmt::format(R"({{"pfNames": ["ens1f0"], "pciAddresses": ["{}", "{}"]}})", vf(0, 1),
                   vf(1, 1)),
       {vf(0, 1)}},
      {"LinkTypeEther", R"({"linkTypes": ["ether"]})", allVfs()},
      {"LinkTypeInfiniband", R"({"linkTypes": ["infiniband"]})", {}},
      {"NotRdma", R"({"isRdma": false})", {}},
      {"SelectorListOred",
       R"([{"pfNames": ["ens1f0#0"]}, {"pfNames": ["ens2f1#3"]}])",
       {vf(0, 0), vf(3, 3)}},
      {"UnknownPfName", R"({"pfNames": ["ens9f0"]})", {}},
      {"RangeBeyondVfs", R"({"pfNames": ["ens1f0#3-9"]})", {vf(0, 3)}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(vfPool(c.selectors), c.want) << c.name;
  }
}

TEST_F(SelectorsTest, EarlierPoolClaimsDevicesFirst) {
  auto cfg = parseConfig(R"({"resourceList": [
      {"resourceName": "first", "selectors": {"pfNames": ["ens1f0#0-1"]}},
      {"resourceName": "rest", "selectors": {"vendors": ["15b3"]}}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  auto pools = buildPools(*cfg, node_->inventory());
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].devices.size(), 2u);
  EXPECT_EQ(pools[1].devices.size(), 14u);
  EXPECT_EQ(pools[1].find(vf(0, 0)), nullptr);
  EXPECT_NE(pools[1].find(vf(0, 2)), nullptr);
}

TEST_F(SelectorsTest, SharedPoolOffersSlotsPerPf) {
  auto cfg = parseConfig(R"({"configList": [{"resourceName": "s", "rdmaHcaMax": 3,
                             "selectors": {"ifNames": ["ens1f0", "ens2f1"]}}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  auto pools = buildPools(*cfg, node_->inventory());
  std::vector<std::string> ids;
  for (const auto& d : pools[0].devices) ids.push_back(d.id);
  std::string a = node_->pf(0).str(), b = node_->pf(3).str();
  EXPECT_THAT(ids,
              ::testing::ElementsAre(a + "-0", a + "-1", a + "-2", b + "-0", b + "-1", b + "-2"));
  const PoolDevice* d = pools[0].find(a + "-1");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->pci, node_->pf(0));
  EXPECT_FALSE(d->rdma_device.empty());
}

TEST_F(SelectorsTest, DefaultConfigSharesPfsAndOffersVfs) {
  auto pools = buildPools(defaultConfig(), node_->inventory());
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].devices.size(), 16u);
  EXPECT_EQ(pools[1].devices.size(), 4u * kDefaultSharedSlots);
}

TEST_F(SelectorsTest, VfDeviceCarriesTopologyAndRdmaDetails) {
  auto pools = buildPools(defaultConfig(), node_->inventory());
  const PoolDevice* d = pools[0].find(vf(2, 1));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->numa_node, 1);
  EXPECT_EQ(d->pf, node_->pf(2));
  EXPECT_EQ(d->pf_netdev, "ens2f0");
  EXPECT_EQ(d->netdev, "ens2f0v1");
  EXPECT_THAT(d->rdma_device, ::testing::StartsWith("mlx5_"));
  EXPECT_FALSE(d->char_devices.empty());
  ASSERT_TRUE(d->gpu_distance.has_value());
  EXPECT_EQ(*d->gpu_distance, Distance::kPix);
  EXPECT_EQ(d->driver, "mlx5_core");
  EXPECT_EQ(d->vf_index, 1);
  EXPECT_THAT(d->pf_rdma_device, ::testing::StartsWith("mlx5_"));
  EXPECT_NE(d->pf_rdma_device, d->rdma_device);
}

}  // namespace
}  // namespace rdmanet::dp
