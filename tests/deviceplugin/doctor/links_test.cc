// The healthy node, and the port checks broken one at a time: links, speed, RDMA ports,
// ibdev2netdev, MTU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

TEST(DoctorHealthyNode, EveryCheckPassesAndExitCodeIsZero) {
  DoctorNode node;
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), IsEmpty());
  EXPECT_EQ(r.exitCode(), 0);
  // Every check concept ran: 4 data ports, 4 GPUs, 2 NIC-GPU pairs per switch.
  EXPECT_EQ(r.all("link").size(), 4u);
  EXPECT_EQ(r.all("link_speed").size(), 4u);
  EXPECT_EQ(r.all("rdma_port").size(), 4u);
  EXPECT_EQ(r.all("ibdev2netdev").size(), 4u);
  EXPECT_EQ(r.all("mtu").size(), 4u);
  EXPECT_EQ(r.all("pfc").size(), 4u);
  EXPECT_EQ(r.all("trust").size(), 4u);
  EXPECT_EQ(r.all("dscp_map").size(), 4u);
  EXPECT_EQ(r.all("numa").size(), 4u);
  EXPECT_EQ(r.all("topology").size(), 4u);
  EXPECT_EQ(r.all("acs").size(), 8u);
  EXPECT_EQ(r.all("gpudirect").size(), 1u);
  EXPECT_EQ(r.all("cpu_governor").size(), 1u);
  EXPECT_EQ(r.all("cpu_cstates").size(), 1u);
  EXPECT_EQ(r.all("counters").size(), 4u);
  EXPECT_EQ(ev(r.find("link", "ens1f0"), "operstate"), "up");
  EXPECT_EQ(ev(r.find("rdma_port", "mlx5_6/1"), "state"), "4: ACTIVE");
  EXPECT_EQ(ev(r.find("ibdev2netdev", "mlx5_6/1"), "mapping"), "mlx5_6 port 1 ==> ens2f0 (up)");
}

TEST(DoctorLinks, PortDownFailsLinkAndRdmaPort) {
  DoctorNode node;
  node.tree().setNetdevUp("ens2f0", false);
  node.tree().writeAttr("/sys/class/net/ens2f0/speed", "-1");  // what a down link reports
  node.tree().setRdmaPortActive("mlx5_6", 1, false);
  const DoctorReport r = node.run();

  const CheckResult* link = r.find("link", "ens2f0");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->verdict, Verdict::kFail);
  EXPECT_EQ(ev(link, "operstate"), "down");
  EXPECT_EQ(ev(link, "carrier"), "0");
  EXPECT_THAT(link->remedy, ::testing::HasSubstr("ip link set ens2f0 up"));

  const CheckResult* port = r.find("rdma_port", "mlx5_6/1");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->verdict, Verdict::kFail);
  EXPECT_EQ(ev(port, "state"), "1: DOWN");
  EXPECT_EQ(ev(port, "phys_state"), "3: Disabled");

  EXPECT_EQ(r.find("link_speed", "ens2f0")->verdict, Verdict::kUnknown);
  EXPECT_THAT(nonPass(r), ElementsAre("link ens2f0 FAIL", "link_speed ens2f0 UNKNOWN",
                                      "rdma_port mlx5_6/1 FAIL"));
  EXPECT_EQ(r.exitCode(), 1);
}

TEST(DoctorLinks, OperstateUnknownWithCarrierCountsAsUp) {
  DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens1f0/operstate", "unknown");
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("link", "ens1f0")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("link", "ens1f0"), "operstate"), "unknown");
  node.tree().writeAttr("/sys/class/net/ens1f0/carrier", "0");
  EXPECT_EQ(node.run().find("link", "ens1f0")->verdict, Verdict::kFail);
}

TEST(DoctorLinks, SlowPortAmongFastOnesIsTheNamedOutlier) {
  DoctorNode node;  // 200G everywhere
  node.tree().writeAttr("/sys/class/net/ens1f1/speed", "100000");
  const DoctorReport r = node.run();

  const CheckResult* slow = r.find("link_speed", "ens1f1");
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->verdict, Verdict::kFail);
  EXPECT_EQ(ev(slow, "speed_mbps"), "100000");
  EXPECT_EQ(ev(slow, "node_speed_mbps"), "200000 (3 of 4 ports)");
  EXPECT_THAT(slow->remedy, ::testing::HasSubstr("ens1f1 negotiated 100000 Mb/s"));
  EXPECT_EQ(r.find("link_speed", "ens1f0")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("link_speed", "ens1f0"), "speed_mbps"), "200000");
  EXPECT_THAT(nonPass(r), ElementsAre("link_speed ens1f1 FAIL"));
}

TEST(DoctorLinks, SpeedTieFlagsTheSlowerHalf) {
  DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens2f0/speed", "100000");
  node.tree().writeAttr("/sys/class/net/ens2f1/speed", "100000");
  EXPECT_THAT(nonPass(node.run()), ElementsAre("link_speed ens2f0 FAIL", "link_speed ens2f1 FAIL"));
}

TEST(DoctorMtu, SmallMtuAmongJumboFramesFails) {
  DoctorNode node;  // MTU 9000 everywhere
  node.tree().writeAttr("/sys/class/net/ens2f1/mtu", "1500");
  const DoctorReport r = node.run();
  const CheckResult* m = r.find("mtu", "ens2f1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, Verdict::kFail);
  EXPECT_EQ(ev(m, "mtu"), "1500");
  EXPECT_EQ(ev(m, "expected_min"), "9000");
  EXPECT_EQ(ev(m, "node_mtu"), "9000 (3 of 4 ports)");
  EXPECT_THAT(m->remedy, ::testing::HasSubstr("ip link set ens2f1 mtu 9000"));
  // Its VFs stayed at 9000: the chain VF <= PF is broken too.
  EXPECT_THAT(nonPass(r), ElementsAre("mtu ens2f1 FAIL", "mtu_chain ens2f1 FAIL"));
}

TEST(DoctorMtu, MixedJumboMtusWarnOnTheOutlier) {
  DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens1f0/mtu", "9216");
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("mtu ens1f0 WARN"));
  EXPECT_EQ(ev(r.find("mtu", "ens1f0"), "mtu"), "9216");
}

TEST(DoctorMtu, ExpectedMtuIsAnOption) {
  DoctorNode node(testing::kHealthyTopology, 1500);
  EXPECT_EQ(node.run().all("mtu").front()->verdict, Verdict::kFail);
  const DoctorReport r = node.run({.expect_mtu = 1500});
  EXPECT_THAT(nonPass(r), IsEmpty());
  EXPECT_EQ(ev(r.find("mtu", "ens1f0"), "expected_min"), "1500");
}

TEST(DoctorRdmaPorts, PfWithoutRdmaDeviceFails) {
  DoctorNode node;
  // mlx5_ib not bound to the second port: no RDMA device under it.
  node.tree().remove("/sys/class/infiniband/mlx5_1");
  node.tree().remove(node.tree().dirOf(sim::pci("0000:03:00.1")) + "/infiniband");
  const DoctorReport r = node.run();
  const CheckResult* p = r.find("rdma_port", "ens1f1");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->verdict, Verdict::kFail);
  EXPECT_EQ(ev(p, "rdma_device"), "none");
  EXPECT_EQ(ev(p, "pci"), "0000:03:00.1");
  EXPECT_EQ(ev(p, "driver"), "mlx5_core");
  EXPECT_THAT(p->remedy, ::testing::HasSubstr("mlx5_ib"));
}

TEST(DoctorRdmaPorts, RdmaDeviceWithoutNetdevFailsIbdev2netdev) {
  DoctorNode node;
  node.tree().removeNetdev("ens1f0");
  node.tree().remove("/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs");
  const DoctorReport r = node.run();
  const CheckResult* m = r.find("ibdev2netdev", "mlx5_0/1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, Verdict::kFail);
  EXPECT_EQ(ev(m, "mapping"), "mlx5_0 port 1 ==> (none)");
  // The port itself has no netdev to judge link state by: UNKNOWN, not PASS.
  EXPECT_EQ(r.find("link", "0000:03:00.0")->verdict, Verdict::kUnknown);
}

}  // namespace
}  // namespace rdmanet::doctor
