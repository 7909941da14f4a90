#include "common/inventory/topology.h"

#include <gtest/gtest.h>

#include "common/inventory/node.h"
#include "tests/simnode/build_node.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

using sim::pci;

constexpr const char* kDefaultTopology = RDMANET_SOURCE_DIR "/hack/topologies/default.json";

// The default topology's tree is built once for the suite: these tests only read it.
class DefaultTopologyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new sim::TempDir("rdmanet-default-topo");
    sim::SimTree tree(dir_->path());
    auto topo = sim::loadTopology(kDefaultTopology);
    if (!topo.ok()) throw std::runtime_error(topo.error().msg);
    auto built = sim::buildNode(*topo, tree);
    if (!built.ok()) throw std::runtime_error(built.error().msg);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  PciePlacement place(std::string_view bdf) {
    auto p = readPlacement(sysfs_, pci(bdf));
    if (!p.ok()) throw std::runtime_error(p.error().msg);
    return *p;
  }

  static sim::TempDir* dir_;
  Sysfs sysfs_{dir_->path()};
};
sim::TempDir* DefaultTopologyTest::dir_ = nullptr;

TEST_F(DefaultTopologyTest, PlacementListsBridgesFromRootPortDown) {
  const auto p = place("0000:03:00.0");
  EXPECT_EQ(p.root_complex, "pci0000:00");
  EXPECT_EQ(p.numa_node, 0);
  EXPECT_EQ(p.bridges, (std::vector<PciAddress>{pci("0000:00:01.0"), pci("0000:01:00.0"),
                                                pci("0000:02:00.0")}));
  const auto gpu = place("0000:87:00.0");
  EXPECT_EQ(gpu.root_complex, "pci0000:80");
  EXPECT_EQ(gpu.numa_node, 1);
  EXPECT_EQ(gpu.bridges.size(), 3u);
}

// Hand-written from hack/topologies/default.json: NIC ens1 (bus 03) and GPU 04:00.0 share a
// switch on pci0000:00; GPU 43:00.0 is behind pci0000:40, also NUMA 0; NIC ens2 (bus 83) and
// GPU 84:00.0 share a switch on pci0000:80; GPU 87:00.0 is behind another root port of it.
TEST_F(DefaultTopologyTest, NicGpuDistanceMatrix) {
  const std::vector<std::string> gpus = {"0000:04:00.0", "0000:43:00.0", "0000:84:00.0",
                                         "0000:87:00.0"};
  struct Row {
    std::string nic;
    std::vector<std::string> expected;
  };
  const std::vector<Row> rows = {
      {"0000:03:00.0", {"PIX", "NODE", "SYS", "SYS"}},  // ens1f0
      {"0000:03:00.1", {"PIX", "NODE", "SYS", "SYS"}},  // ens1f1
      {"0000:03:00.2", {"PIX", "NODE", "SYS", "SYS"}},  // ens1f0v0
      {"0000:03:01.1", {"PIX", "NODE", "SYS", "SYS"}},  // ens1f1v3
      {"0000:83:00.0", {"SYS", "SYS", "PIX", "PHB"}},   // ens2f0
      {"0000:83:00.7", {"SYS", "SYS", "PIX", "PHB"}},   // ens2f1v1
  };
  for (const auto& row : rows) {
    for (size_t g = 0; g < gpus.size(); ++g) {
      const Distance d = classifyDistance(place(row.nic), place(gpus[g]));
      EXPECT_EQ(distanceName(d), row.expected[g]) << row.nic << " <-> " << gpus[g];
      EXPECT_EQ(classifyDistance(place(gpus[g]), place(row.nic)), d) << "not symmetric";
    }
  }
}

TEST_F(DefaultTopologyTest, ScanNodeFindsEveryNicFunctionAndGpu) {
  const NodeInventory inv = scanNode(sysfs_);
  EXPECT_EQ(inv.nics.size(), 20u);  // 2 NICs x (2 PFs + 8 VFs)
  EXPECT_EQ(inv.gpus.size(), 4u);
  const NicFunction* pf = inv.nic(pci("0000:03:00.0"));
  ASSERT_NE(pf, nullptr);
  EXPECT_EQ(pf->pci.vfs.size(), 4u);
  ASSERT_EQ(pf->netdevs.size(), 1u);
  EXPECT_EQ(pf->netdevs[0].name, "ens1f0");
  ASSERT_EQ(pf->rdma.size(), 1u);
  EXPECT_EQ(pf->rdma[0].name, "mlx5_0");
  const NicFunction* vf = inv.nic(pci("0000:83:00.2"));
  ASSERT_NE(vf, nullptr);
  EXPECT_EQ(vf->pci.pf, pci("0000:83:00.0"));
  EXPECT_EQ(vf->netdevs[0].name, "ens2f0v0");
  EXPECT_EQ(vf->rdma.size(), 1u);
  EXPECT_EQ(inv.nearest_gpu.at(pci("0000:03:00.4")), Distance::kPix);
  EXPECT_EQ(inv.nearest_gpu.at(pci("0000:83:00.0")), Distance::kPix);
  for (const auto& g : inv.gpus) EXPECT_TRUE(isGpu(g.pci));
}

// A NIC two switches below the one that also holds the GPU: PXB.
TEST(DistanceTest, NestedSwitchIsPxb) {
  sim::TempDir dir;
  sim::SimTree tree(dir.path());
  auto topo = sim::parseTopology(R"({"host_bridges": [{"bus": "0x10", "numa_node": 0,
      "root_ports": [{"switch": {"downstream": [
          {"switch": {"downstream": [{"nic": {"ports": 1, "vfs_per_port": 0}}]}},
          {"gpu": {}}]}}]}]})");
  ASSERT_TRUE(topo.ok()) << topo.error().msg;
  auto built = sim::buildNode(*topo, tree);
  ASSERT_TRUE(built.ok()) << built.error().msg;
  Sysfs sysfs(dir.path());
  const auto nic = readPlacement(sysfs, built->nics[0].pfs[0]);
  const auto gpu = readPlacement(sysfs, built->gpus[0]);
  ASSERT_TRUE(nic.ok() && gpu.ok());
  EXPECT_EQ(nic->bridges.size(), 5u);
  EXPECT_EQ(classifyDistance(*nic, *gpu), Distance::kPxb);
}

PciePlacement placement(std::string rc, std::vector<std::string> bridges, int numa) {
  PciePlacement p;
  p.root_complex = std::move(rc);
  for (const auto& b : bridges) p.bridges.push_back(pci(b));
  p.numa_node = numa;
  return p;
}

TEST(DistanceTest, ClassesFromPlacements) {
  const auto nic = placement("pci0000:80", {"0000:80:01.0", "0000:81:00.0", "0000:82:00.0"}, 1);
  // Same switch, other downstream port.
  EXPECT_EQ(classifyDistance(
                nic, placement("pci0000:80", {"0000:80:01.0", "0000:81:00.0", "0000:82:08.0"}, 1)),
            Distance::kPix);
  // Other root port, same host bridge.
  EXPECT_EQ(classifyDistance(nic, placement("pci0000:80", {"0000:80:03.0"}, 1)), Distance::kPhb);
  // Other host bridge, same NUMA node.
  EXPECT_EQ(classifyDistance(nic, placement("pci0000:a0", {"0000:a0:01.0"}, 1)), Distance::kNode);
  // Other NUMA node.
  EXPECT_EQ(classifyDistance(nic, placement("pci0000:00", {"0000:00:01.0"}, 0)), Distance::kSys);
  // Unknown NUMA on both sides is not "the same node".
  EXPECT_EQ(classifyDistance(placement("pci0000:00", {}, -1), placement("pci0000:40", {}, -1)),
            Distance::kSys);
  // Unknown placement.
  EXPECT_EQ(classifyDistance(placement("", {}, 1), nic), Distance::kNode);
}

TEST(DistanceTest, Names) {
  EXPECT_EQ(distanceName(Distance::kPix), "PIX");
  EXPECT_EQ(distanceName(Distance::kPxb), "PXB");
  EXPECT_EQ(distanceName(Distance::kPhb), "PHB");
  EXPECT_EQ(distanceName(Distance::kNode), "NODE");
  EXPECT_EQ(distanceName(Distance::kSys), "SYS");
  EXPECT_LT(Distance::kPix, Distance::kSys);
}

TEST(PlacementTest, MissingFunctionIsDeviceNotFound) {
  sim::TempDir dir;
  sim::SimTree tree(dir.path());
  EXPECT_EQ(readPlacement(Sysfs(dir.path()), pci("0000:01:00.0")).error().code,
            ErrorCode::kDeviceNotFound);
}

TEST(PlacementTest, MissingNumaNodeGivesMinusOneAndSys) {
  sim::TempDir dir;
  sim::SimTree tree(dir.path());
  const auto rp = tree.addBridge(tree.addHostBridge(0, 0x80), {.address = pci("0000:80:01.0")});
  tree.addFunction(rp, {.address = pci("0000:81:00.0"), .numa_node = {}});
  const auto rp2 = tree.addBridge(tree.addHostBridge(0, 0xa0), {.address = pci("0000:a0:01.0")});
  tree.addFunction(rp2, {.address = pci("0000:a1:00.0"), .numa_node = {}});
  Sysfs sysfs(dir.path());
  auto a = readPlacement(sysfs, pci("0000:81:00.0"));
  auto b = readPlacement(sysfs, pci("0000:a1:00.0"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->numa_node, -1);
  EXPECT_EQ(classifyDistance(*a, *b), Distance::kSys);
}

}  // namespace
}  // namespace rdmanet
