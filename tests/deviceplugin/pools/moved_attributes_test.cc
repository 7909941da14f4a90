// Pool membership of devices whose netdev (and RDMA device) went into a pod
// (deviceplugin/pools/moved_attributes.h), on hand-built inventories: what sysfs shows before,
// during and after a VF's stay in a pod.
#include "deviceplugin/pools/moved_attributes.h"

#include <gtest/gtest.h>

#include <set>

#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {
namespace {

PciAddress pci(const char* s) { return PciAddress::parse(s).value(); }

Netdev netdev(const std::string& name, const char* operstate = "up") {
  Netdev n;
  n.name = name;
  n.operstate = operstate;
  n.link_type = LinkType::kEther;
  return n;
}

RdmaDevice rdmaDevice(const std::string& name) {
  RdmaDevice r;
  r.name = name;
  return r;
}

// One PF (no netdev of interest) with two mlx5 VFs, each with a netdev and an RDMA device.
NodeInventory node() {
  NodeInventory inv;
  NicFunction pf;
  pf.pci.address = pci("0000:81:00.0");
  pf.pci.vendor = "15b3";
  pf.pci.device = "101d";
  pf.pci.class_code = 0x020000;
  pf.pci.driver = "mlx5_core";
  pf.pci.sriov_totalvfs = 4;
  pf.pci.sriov_numvfs = 2;
  pf.netdevs = {netdev("ens1f0")};
  inv.nics.push_back(pf);
  for (int i = 0; i < 2; ++i) {
    NicFunction vf;
    vf.pci.address = pci(i == 0 ? "0000:81:00.2" : "0000:81:00.3");
    vf.pci.vendor = "15b3";
    vf.pci.device = "101e";
    vf.pci.class_code = 0x020000;
    vf.pci.driver = "mlx5_core";
    vf.pci.pf = pf.pci.address;
    vf.pci.vf_index = i;
    vf.netdevs = {netdev("ens1f0v" + std::to_string(i))};
    vf.rdma = {rdmaDevice("mlx5_" + std::to_string(i + 2))};
    inv.nics.push_back(vf);
  }
  return inv;
}

// What sysfs shows once VF 0's netdev is in a pod: no netdev, and no RDMA device either
// (exclusive RDMA netns mode, or an rxe deleted by the move).
void moveIntoPod(NodeInventory& inv) {
  inv.nics[1].netdevs.clear();
  inv.nics[1].rdma.clear();
}

std::set<std::string> ids(const std::string& selectors, const NodeInventory& inv,
                          const MovedAttributes* moved) {
  auto cfg =
      parseConfig(R"({"resourceList": [{"resourceName": "vf", "selectors": )" + selectors + "}]}");
  EXPECT_TRUE(cfg.ok()) << cfg.error().msg;
  std::set<std::string> out;
  if (!cfg.ok()) return out;
  const auto pools = buildPools(*cfg, inv, moved);
  for (const auto& d : pools[0].devices) out.insert(d.id);
  return out;
}

const std::set<std::string> kBoth = {"0000:81:00.2", "0000:81:00.3"};

TEST(MovedAttributesTest, WithoutMemoryAVfInAPodDropsOutOfAnRdmaSelector) {
  NodeInventory inv = node();
  moveIntoPod(inv);
  EXPECT_EQ(ids(R"([{"isRdma": true}])", inv, nullptr), std::set<std::string>{"0000:81:00.3"});
}

TEST(MovedAttributesTest, AVfInAPodKeepsItsPlaceInEveryKindOfSelector) {
  NodeInventory inv = node();
  MovedAttributes moved;
  moved.observe(inv);
  moveIntoPod(inv);
  moved.observe(inv);
  EXPECT_EQ(moved.movedCount(), 1u);
  for (const char* sel : {R"([{"isRdma": true}])", R"([{"ifNames": ["ens1f0v0", "ens1f0v1"]}])",
                          R"([{"linkTypes": ["ether"]}])", R"([{"drivers": ["mlx5_core"]}])"}) {
    EXPECT_EQ(ids(sel, inv, &moved), kBoth) << sel;
  }
  // The device itself is what sysfs shows: no netdev or RDMA device to hand out or judge.
  auto cfg = parseConfig(R"({"resourceList": [{"resourceName": "vf",
      "selectors": [{"isRdma": true}]}]})");
  const Pool pool = buildPools(*cfg, inv, &moved)[0];
  const PoolDevice* d = pool.find("0000:81:00.2");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->netdev, "");
  EXPECT_EQ(d->rdma_device, "");
  EXPECT_EQ(d->pf_netdev, "ens1f0");
}

TEST(MovedAttributesTest, TheMemoryLastsAcrossScansWhileTheVfStaysInThePod) {
  NodeInventory inv = node();
  MovedAttributes moved;
  moved.observe(inv);
  moveIntoPod(inv);
  for (int scan = 0; scan < 3; ++scan) moved.observe(inv);
  EXPECT_EQ(ids(R"([{"isRdma": true}])", inv, &moved), kBoth);
}

TEST(MovedAttributesTest, BackInTheHostTheVfIsSeenAsItIs) {
  NodeInventory inv = node();
  MovedAttributes moved;
  moved.observe(inv);
  moveIntoPod(inv);
  moved.observe(inv);
  // The netdev is back; the rxe that died with the move is not.
  inv.nics[1].netdevs = {netdev("ens1f0v0", "down")};
  moved.observe(inv);
  EXPECT_EQ(moved.movedCount(), 0u);
  EXPECT_EQ(ids(R"([{"isRdma": true}])", inv, &moved), std::set<std::string>{"0000:81:00.3"});
}

TEST(MovedAttributesTest, ADriverChangeOrAVanishedFunctionIsForgotten) {
  NodeInventory inv = node();
  MovedAttributes moved;
  moved.observe(inv);
  moveIntoPod(inv);
  inv.nics[1].pci.driver = "vfio-pci";  // rebound: its netdev is gone for good
  moved.observe(inv);
  EXPECT_EQ(ids(R"([{"isRdma": true}])", inv, &moved), std::set<std::string>{"0000:81:00.3"});

  NodeInventory gone = node();
  moved.observe(gone);
  gone.nics.erase(gone.nics.begin() + 1);  // sriov_numvfs lowered
  moved.observe(gone);
  NodeInventory back = node();  // the same address reappears, as a fresh VF
  moveIntoPod(back);
  moved.observe(back);
  EXPECT_EQ(moved.movedCount(), 0u);
}

// An unbound VF (driver crash, manual unbind) is a fault: it stays in its pool, where the
// health model marks it Unhealthy, instead of vanishing from kubelet's capacity.
TEST(MovedAttributesTest, AnUnboundFunctionKeepsItsPlace) {
  NodeInventory inv = node();
  MovedAttributes moved;
  moved.observe(inv);
  moveIntoPod(inv);
  inv.nics[1].pci.driver = "";
  moved.observe(inv);
  EXPECT_EQ(moved.movedCount(), 1u);
  EXPECT_EQ(ids(R"([{"isRdma": true}])", inv, &moved),
            (std::set<std::string>{"0000:81:00.3", inv.nics[1].pci.address.str()}));
}

TEST(MovedAttributesTest, ANeverSeenFunctionWithoutNetdevIsNotInvented) {
  NodeInventory inv = node();
  moveIntoPod(inv);  // the plugin started while the VF was already in a pod
  MovedAttributes moved;
  moved.observe(inv);
  EXPECT_EQ(moved.movedCount(), 0u);
  EXPECT_EQ(ids(R"([{"isRdma": true}])", inv, &moved), std::set<std::string>{"0000:81:00.3"});
}

}  // namespace
}  // namespace rdmanet::dp
