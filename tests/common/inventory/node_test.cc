#include "common/inventory/node.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/simnode/build_node.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

using sim::pci;

// Two NICs of two PFs with `vfs` VFs each, a GPU beside each; bus 03 and 83 (see build_node.h).
sim::Topology twoNics(int vfs) {
  auto nic = [&](const char* name) {
    sim::SlotModel sw{.kind = sim::SlotModel::Kind::kSwitch};
    sw.downstream.push_back(
        {.kind = sim::SlotModel::Kind::kNic,
         .nic = {.name = name, .ports = 2, .vfs_per_port = vfs, .total_vfs = vfs}});
    sw.downstream.push_back({.kind = sim::SlotModel::Kind::kGpu});
    return sw;
  };
  sim::Topology t{.name = "two-nics"};
  t.host_bridges.push_back({.domain = 0, .bus = 0x00, .numa_node = 0, .root_ports = {nic("ens1")}});
  t.host_bridges.push_back({.domain = 0, .bus = 0x80, .numa_node = 1, .root_ports = {nic("ens2")}});
  return t;
}

// What scanNode() must equal: every function read on its own with the single-function readers,
// the way a caller without the whole-node indexes would.
NodeInventory referenceScan(const Sysfs& sysfs) {
  NodeInventory inv;
  for (const PciAddress& a : listPciFunctions(sysfs)) {
    auto fn = readPciFunction(sysfs, a);
    if (!fn.ok()) continue;
    auto place = readPlacement(sysfs, a);
    EXPECT_TRUE(place.ok()) << a.str();
    if (fn->isNetwork()) {
      inv.nics.push_back({.pci = *fn,
                          .placement = *place,
                          .netdevs = netdevsOf(sysfs, a),
                          .rdma = rdmaDevicesOf(sysfs, a)});
    } else if (isGpu(*fn)) {
      inv.gpus.push_back({.pci = *fn, .placement = *place});
    }
  }
  for (const auto& n : inv.nics) {
    for (const auto& g : inv.gpus) {
      const Distance d = classifyDistance(n.placement, g.placement);
      auto [it, inserted] = inv.nearest_gpu.emplace(n.pci.address, d);
      if (!inserted && d < it->second) it->second = d;
    }
  }
  return inv;
}

class NodeScanTest : public ::testing::Test {
 protected:
  void build(int vfs) {
    auto b = sim::buildNode(twoNics(vfs), tree_);
    ASSERT_TRUE(b.ok()) << b.error().msg;
    built_ = *b;
  }
  // Every field of every entry, so a mismatch names the function and the part that differs.
  static void expectSame(const NodeInventory& got, const NodeInventory& want) {
    ASSERT_EQ(got.nics.size(), want.nics.size());
    for (size_t i = 0; i < want.nics.size(); ++i) {
      const std::string at = want.nics[i].pci.address.str();
      EXPECT_EQ(got.nics[i].pci, want.nics[i].pci) << at;
      EXPECT_EQ(got.nics[i].placement, want.nics[i].placement) << at;
      EXPECT_EQ(got.nics[i].netdevs, want.nics[i].netdevs) << at;
      EXPECT_EQ(got.nics[i].rdma, want.nics[i].rdma) << at;
    }
    EXPECT_EQ(got.gpus, want.gpus);
    EXPECT_EQ(got.nearest_gpu, want.nearest_gpu);
  }

  sim::TempDir dir_{"rdmanet-node-scan"};
  sim::SimTree tree_{dir_.path()};
  Sysfs sysfs_{dir_.path()};
  sim::BuiltNode built_;
};

TEST_F(NodeScanTest, WholeNodeScanEqualsReadingEachFunctionOnItsOwn) {
  build(5);
  const NodeInventory inv = scanNode(sysfs_);
  ASSERT_EQ(inv.nics.size(), 24u);  // 2 NICs x (2 PFs + 10 VFs)
  ASSERT_EQ(inv.gpus.size(), 2u);
  expectSame(inv, referenceScan(sysfs_));
  // The second PF's VFs sit past an SR-IOV offset that differs from the first PF's.
  const NicFunction* vf = inv.nic(built_.nics[0].vfs[1][4]);
  ASSERT_NE(vf, nullptr);
  EXPECT_EQ(vf->pci.vf_index, 4);
  EXPECT_EQ(vf->pci.pf, built_.nics[0].pfs[1]);
}

TEST_F(NodeScanTest, VfIndexComesFromThePfsLinksEvenWhenTheOffsetIsWrong) {
  build(3);
  // A hand-made or odd tree whose sriov_offset does not match where the VFs are.
  const PciAddress pf = built_.nics[1].pfs[0];
  tree_.writeAttr(fmt::format("/sys/bus/pci/devices/{}/sriov_offset", pf.str()), "40");
  const NodeInventory inv = scanNode(sysfs_);
  for (int i = 0; i < 3; ++i) {
    const NicFunction* vf = inv.nic(built_.nics[1].vfs[0][i]);
    ASSERT_NE(vf, nullptr);
    EXPECT_EQ(vf->pci.vf_index, i);
    auto alone = readPciFunction(sysfs_, built_.nics[1].vfs[0][i]);
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ(alone->vf_index, i);
  }
}

TEST_F(NodeScanTest, ScanWithoutVfsHasThePfsAsAFullScanSeesThem) {
  build(3);
  tree_.addSoftRdma({.name = "rxe0"}, "ens2f0");    // software RDMA on a PF's netdev
  tree_.addSoftRdma({.name = "rxe1"}, "ens2f0v1");  // and on a VF's, left out with it
  const NodeInventory full = scanNode(sysfs_);
  const NodeInventory pfs = scanNode(sysfs_, {.vfs = false});
  NodeInventory want = full;
  std::erase_if(want.nics, [](const NicFunction& n) { return n.pci.isVf(); });
  std::erase_if(want.nearest_gpu, [&](const auto& kv) { return !want.nic(kv.first); });
  ASSERT_EQ(want.nics.size(), 4u);
  expectSame(pfs, want);
  EXPECT_EQ(pfs.nic(built_.nics[1].pfs[0])->rdma.size(), 2u);  // mlx5_N and rxe0
  EXPECT_EQ(pfs.nic(built_.nics[1].pfs[0])->pci.vfs.size(), 3u);
}

TEST_F(NodeScanTest, ScanWithoutGidsDiffersFromAFullScanOnlyInTheGids) {
  build(2);
  NodeInventory want = scanNode(sysfs_);
  ASSERT_FALSE(want.nics.at(0).rdma.at(0).ports.at(0).gids.empty());
  for (NicFunction& n : want.nics) {
    for (RdmaDevice& d : n.rdma) {
      for (RdmaPort& p : d.ports) p.gids.clear();
    }
  }
  NodeInventory got = scanNode(sysfs_, {.gids = false});
  expectSame(got, want);
  // A rescan with the same options keeps it so.
  tree_.setNetdevUp("ens2f0v0", false);
  rescanPf(sysfs_, built_.nics[1].pfs[0], got, {.gids = false});
  expectSame(got, scanNode(sysfs_, {.gids = false}));
}

TEST_F(NodeScanTest, NicLookupFindsEveryFunctionAndNothingElse) {
  build(2);
  const NodeInventory inv = scanNode(sysfs_);
  for (const NicFunction& n : inv.nics) {
    const NicFunction* found = inv.nic(n.pci.address);
    ASSERT_NE(found, nullptr) << n.pci.address.str();
    EXPECT_EQ(found, &n);
  }
  EXPECT_EQ(inv.nic(pci("0000:03:00.7")), nullptr);  // past the last VF of the first NIC
  EXPECT_EQ(inv.nic(built_.gpus[0]), nullptr);       // a GPU is not a NIC function
  EXPECT_EQ(NodeInventory{}.nic(pci("0000:03:00.0")), nullptr);
}

TEST_F(NodeScanTest, RescanOfOnePfEqualsAFullScanAfterItsVfsChange) {
  build(4);
  tree_.addSoftRdma({.name = "rxe0"}, "ens1f1");  // software RDMA on the PF's netdev
  NodeInventory inv = scanNode(sysfs_);
  const PciAddress pf = built_.nics[0].pfs[1];
  ASSERT_EQ(inv.nic(pf)->rdma.size(), 2u);
  // One VF's netdev goes down and another VF loses its driver (rebound to vfio-pci: no netdev,
  // no RDMA device any more).
  tree_.setNetdevUp("ens1f1v0", false);
  const PciAddress gone = built_.nics[0].vfs[1][2];
  tree_.bindDriver(gone, "vfio-pci");
  tree_.removeNetdev("ens1f1v2");
  const std::vector<PciAddress> reread = rescanPf(sysfs_, pf, inv);
  EXPECT_EQ(reread.size(), 5u);  // the PF and its 4 VFs
  expectSame(inv, scanNode(sysfs_));
  EXPECT_EQ(inv.nic(gone)->pci.driver, "vfio-pci");
  EXPECT_TRUE(inv.nic(gone)->netdevs.empty());
  EXPECT_EQ(inv.nic(pf)->rdma.size(), 2u);  // mlx5_N and rxe0
}

TEST_F(NodeScanTest, RescanOfOnePfLeavesOtherPfsEntriesAlone) {
  build(2);
  NodeInventory inv = scanNode(sysfs_);
  const NodeInventory before = inv;
  // Both PFs of NIC 1 change on disk, but only the first is rescanned: the second's entries
  // keep what the last scan saw, which shows they were not read again.
  tree_.setNetdevUp("ens1f0v1", false);
  tree_.setNetdevUp("ens1f1v1", false);
  rescanPf(sysfs_, built_.nics[0].pfs[0], inv);
  for (size_t i = 0; i < inv.nics.size(); ++i) {
    const NicFunction& n = inv.nics[i];
    const bool mine = n.pci.address == built_.nics[0].pfs[0] || n.pci.pf == built_.nics[0].pfs[0];
    if (mine) continue;
    EXPECT_EQ(n.pci, before.nics[i].pci);
    EXPECT_EQ(n.netdevs, before.nics[i].netdevs) << n.pci.address.str();
    EXPECT_EQ(n.rdma, before.nics[i].rdma) << n.pci.address.str();
  }
  EXPECT_EQ(inv.nic(built_.nics[0].vfs[0][1])->netdevs.at(0).operstate, "down");
  EXPECT_EQ(inv.nic(built_.nics[0].vfs[1][1])->netdevs.at(0).operstate, "up");  // stale on purpose
}

TEST_F(NodeScanTest, RescanOfOnePfFollowsItsVfCount) {
  build(3);
  NodeInventory inv = scanNode(sysfs_);
  const PciAddress pf = built_.nics[1].pfs[0];
  // sriov_numvfs lowered to 1: the kernel removes VFs 1 and 2 with their links.
  for (int i = 1; i < 3; ++i) {
    const PciAddress vf = built_.nics[1].vfs[0][i];
    tree_.remove(fmt::format("/sys/bus/pci/devices/{}/virtfn{}", pf.str(), i));
    tree_.remove(fmt::format("/sys/class/net/ens2f0v{}", i));
    tree_.remove(fmt::format("/sys/class/infiniband/{}", inv.nic(vf)->rdma.at(0).name));
    tree_.remove(inv.nic(vf)->pci.sysfs_dir);
    tree_.remove(fmt::format("/sys/bus/pci/devices/{}", vf.str()));
  }
  tree_.writeAttr(fmt::format("/sys/bus/pci/devices/{}/sriov_numvfs", pf.str()), "1");
  rescanPf(sysfs_, pf, inv);
  expectSame(inv, scanNode(sysfs_));
  EXPECT_EQ(inv.nic(pf)->pci.vfs.size(), 1u);
  EXPECT_EQ(inv.nic(built_.nics[1].vfs[0][1]), nullptr);
}

TEST_F(NodeScanTest, RescanOfAVanishedPfDropsItAndItsVfs) {
  build(2);
  NodeInventory inv = scanNode(sysfs_);
  const PciAddress pf = built_.nics[0].pfs[0];
  const size_t n = inv.nics.size();
  tree_.remove(fmt::format("/sys/bus/pci/devices/{}", pf.str()));
  EXPECT_TRUE(rescanPf(sysfs_, pf, inv).empty());
  EXPECT_EQ(inv.nics.size(), n - 3);
  EXPECT_EQ(inv.nic(pf), nullptr);
  EXPECT_EQ(inv.nic(built_.nics[0].vfs[0][0]), nullptr);
  EXPECT_FALSE(inv.nearest_gpu.contains(pf));
  EXPECT_NE(inv.nic(built_.nics[0].pfs[1]), nullptr);
}

TEST_F(NodeScanTest, PfOfAFunctionIsItselfForAPfAndThePhysfnForAVf) {
  build(2);
  const NodeInventory inv = scanNode(sysfs_);
  const PciAddress pf = built_.nics[1].pfs[1];
  EXPECT_EQ(pfOf(sysfs_, inv, pf), pf);
  EXPECT_EQ(pfOf(sysfs_, inv, built_.nics[1].vfs[1][0]), pf);
  EXPECT_EQ(pfOf(sysfs_, NodeInventory{}, built_.nics[1].vfs[1][0]), pf);  // not scanned yet
  EXPECT_EQ(pfOf(sysfs_, inv, built_.gpus[0]), std::nullopt);
  EXPECT_EQ(pfOf(sysfs_, inv, pci("0000:99:00.0")), std::nullopt);
}

TEST(PciDevpathTest, FunctionOfAUeventDevpathIsItsLastPciComponent) {
  EXPECT_EQ(functionOfDevpath("/devices/pci0000:00/0000:00:01.0/0000:03:00.2"),
            pci("0000:03:00.2"));
  EXPECT_EQ(functionOfDevpath("/devices/pci0000:00/0000:00:01.0/0000:03:00.2/net/ens1f0v0"),
            pci("0000:03:00.2"));
  EXPECT_EQ(functionOfDevpath("/devices/pci0000:00/0000:00:01.0/0000:03:00.0/infiniband/mlx5_0"),
            pci("0000:03:00.0"));
  EXPECT_EQ(functionOfDevpath("/devices/virtual/net/veth0"), std::nullopt);
  EXPECT_EQ(functionOfDevpath("/devices/pci0000:00"), std::nullopt);
  EXPECT_EQ(functionOfDevpath(""), std::nullopt);
}

}  // namespace
}  // namespace rdmanet
