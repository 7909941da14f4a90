// GetPreferredAllocation policies on the simulated node's default topology.
#include "deviceplugin/pools/preferred.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "deviceplugin/pools/config.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using ::testing::ElementsAre;
using testing::TestNode;
using ::testing::UnorderedElementsAre;

class PreferredTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { node_ = new TestNode(); }
  static void TearDownTestSuite() {
    delete node_;
    node_ = nullptr;
  }

  static Pool vfPool(AllocationPolicy policy) {
    Pool p = buildPools(defaultConfig(), node_->inventory())[0];
    p.config.preferred_allocation = policy;
    return p;
  }
  static std::vector<std::string> all(const Pool& p) {
    std::vector<std::string> ids;
    for (const auto& d : p.devices) ids.push_back(d.id);
    // Kubelet's order is arbitrary: the answer must not depend on it.
    std::shuffle(ids.begin(), ids.end(), std::mt19937(42));
    return ids;
  }
  static std::string vf(int pf, int vf) { return node_->vf(pf, vf).str(); }
  static PoolDevice& dev(Pool& p, const std::string& id) {
    return *std::find_if(p.devices.begin(), p.devices.end(),
                         [&](const PoolDevice& d) { return d.id == id; });
  }

  static TestNode* node_;
};

TestNode* PreferredTest::node_ = nullptr;

TEST_F(PreferredTest, PackFillsOnePfFirst) {
  Pool p = vfPool(AllocationPolicy::kPack);
  EXPECT_THAT(preferredAllocation(p, all(p), {}, 3), ElementsAre(vf(0, 0), vf(0, 1), vf(0, 2)));
  EXPECT_THAT(preferredAllocation(p, all(p), {}, 6),
              ElementsAre(vf(0, 0), vf(0, 1), vf(0, 2), vf(0, 3), vf(1, 0), vf(1, 1)));
}

TEST_F(PreferredTest, PackJoinsThePfOfMustIncludeDevices) {
  Pool p = vfPool(AllocationPolicy::kPack);
  EXPECT_THAT(preferredAllocation(p, all(p), {vf(2, 3)}, 3),
              ElementsAre(vf(2, 3), vf(2, 0), vf(2, 1)));
}

TEST_F(PreferredTest, PackPrefersThePfWithMoreAvailableDevices) {
  Pool p = vfPool(AllocationPolicy::kPack);
  std::vector<std::string> avail = {vf(0, 0), vf(1, 0), vf(1, 1), vf(1, 2)};
  EXPECT_THAT(preferredAllocation(p, avail, {}, 2), ElementsAre(vf(1, 0), vf(1, 1)));
}

TEST_F(PreferredTest, SpreadRoundRobinsOverPfsOfOneNumaNode) {
  Pool p = vfPool(AllocationPolicy::kSpread);
  EXPECT_THAT(preferredAllocation(p, all(p), {}, 2), ElementsAre(vf(0, 0), vf(1, 0)));
  EXPECT_THAT(preferredAllocation(p, all(p), {}, 4),
              ElementsAre(vf(0, 0), vf(1, 0), vf(0, 1), vf(1, 1)));
}

TEST_F(PreferredTest, SpreadFollowsTheNumaNodeOfMustIncludeDevices) {
  Pool p = vfPool(AllocationPolicy::kSpread);
  EXPECT_THAT(preferredAllocation(p, all(p), {vf(3, 0)}, 3),
              ElementsAre(vf(3, 0), vf(2, 0), vf(2, 1)));
}

TEST_F(PreferredTest, GpuNearPrefersTheClosestDistanceClass) {
  Pool p = vfPool(AllocationPolicy::kGpuNear);
  // Make socket 0's NIC farther from its GPUs than socket 1's.
  for (int pf : {0, 1}) {
    for (int i = 0; i < 4; ++i) dev(p, vf(pf, i)).gpu_distance = Distance::kNode;
  }
  EXPECT_THAT(preferredAllocation(p, all(p), {}, 2), ElementsAre(vf(2, 0), vf(2, 1)));
  dev(p, vf(0, 3)).gpu_distance = Distance::kPix;
  dev(p, vf(2, 0)).gpu_distance = Distance::kPxb;
  EXPECT_THAT(preferredAllocation(p, all(p), {}, 3), ElementsAre(vf(0, 3), vf(2, 1), vf(2, 2)));
}

TEST_F(PreferredTest, GpuNearOnDefaultTopologyStaysOnOneNumaNode) {
  Pool p = vfPool(AllocationPolicy::kGpuNear);
  auto got = preferredAllocation(p, all(p), {}, 5);
  ASSERT_EQ(got.size(), 5u);
  for (const auto& id : got) EXPECT_EQ(p.find(id)->numa_node, 0) << id;
}

TEST_F(PreferredTest, UnhealthyDevicesComeLast) {
  for (auto policy :
       {AllocationPolicy::kPack, AllocationPolicy::kSpread, AllocationPolicy::kGpuNear}) {
    Pool p = vfPool(policy);
    dev(p, vf(0, 0)).healthy = false;
    auto got = preferredAllocation(p, {vf(0, 0), vf(0, 1)}, {}, 1);
    EXPECT_THAT(got, ElementsAre(vf(0, 1))) << policyName(policy);
    got = preferredAllocation(p, {vf(0, 0), vf(0, 1)}, {}, 2);
    EXPECT_THAT(got, UnorderedElementsAre(vf(0, 0), vf(0, 1))) << policyName(policy);
  }
}

TEST_F(PreferredTest, IsDeterministicWhateverTheAvailableOrder) {
  for (auto policy :
       {AllocationPolicy::kPack, AllocationPolicy::kSpread, AllocationPolicy::kGpuNear}) {
    Pool p = vfPool(policy);
    auto ids = all(p);
    auto first = preferredAllocation(p, ids, {vf(1, 2)}, 5);
    for (int seed = 0; seed < 20; ++seed) {
      std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
      EXPECT_EQ(preferredAllocation(p, ids, {vf(1, 2)}, 5), first) << policyName(policy);
    }
  }
}

TEST_F(PreferredTest, EdgeCases) {
  Pool p = vfPool(AllocationPolicy::kPack);
  // Asking for more than is available returns everything available.
  EXPECT_THAT(preferredAllocation(p, {vf(3, 3), vf(3, 2)}, {}, 5), ElementsAre(vf(3, 2), vf(3, 3)));
  // Unknown IDs are ignored; must-include IDs are always kept, in order, once.
  EXPECT_THAT(preferredAllocation(p, {"bogus", vf(3, 1)}, {vf(3, 0), vf(3, 0)}, 2),
              ElementsAre(vf(3, 0), vf(3, 1)));
  // A size at or below the must-include count returns just those.
  EXPECT_THAT(preferredAllocation(p, all(p), {vf(1, 1), vf(2, 2)}, 1),
              ElementsAre(vf(1, 1), vf(2, 2)));
  EXPECT_TRUE(preferredAllocation(p, all(p), {}, 0).empty());
}

}  // namespace
}  // namespace rdmanet::dp
