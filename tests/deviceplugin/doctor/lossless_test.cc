// Lossless Ethernet checks against the fake kernel's DCB state: PFC on the priority, one trust
// mode, a DSCP map covering the priority, and UNKNOWN whenever DCB cannot be read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>

#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

TEST(DoctorLossless, HealthyDcbPassesWithEvidence) {
  DoctorNode node;
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("pfc", "ens1f0")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("pfc", "ens1f0"), "pfc_enabled"), "3");
  EXPECT_EQ(ev(r.find("pfc", "ens1f0"), "priority"), "3");
  EXPECT_EQ(ev(r.find("trust", "ens1f0"), "trust"), "dscp");
  EXPECT_EQ(ev(r.find("trust", "ens1f0"), "node_trust"), "dscp (4 of 4 ports)");
  EXPECT_EQ(ev(r.find("dscp_map", "ens1f0"), "dscp_to_priority"), "26");
  EXPECT_EQ(ev(r.find("dscp_map", "ens1f0"), "map"), "3:26 6:48");
}

TEST(DoctorLossless, DriverWithoutDcbIsUnknownNotPass) {
  DoctorNode node;
  node.setDcb("ens2f0", std::nullopt);  // the fake answers supported == false
  const DoctorReport r = node.run();
  const CheckResult* pfc = r.find("pfc", "ens2f0");
  ASSERT_NE(pfc, nullptr);
  EXPECT_EQ(pfc->verdict, Verdict::kUnknown);
  EXPECT_EQ(ev(pfc, "dcb"), "driver does not report DCB (no IEEE DCB attributes)");
  EXPECT_THAT(pfc->remedy, HasSubstr("dcb pfc show dev ens2f0"));
  // Nothing else is claimed about that port.
  EXPECT_EQ(r.find("trust", "ens2f0"), nullptr);
  EXPECT_EQ(r.find("dscp_map", "ens2f0"), nullptr);
  EXPECT_THAT(nonPass(r), ElementsAre("pfc ens2f0 UNKNOWN"));
  EXPECT_EQ(r.exitCode(), 0);  // UNKNOWN does not fail the node
}

TEST(DoctorLossless, PfcOffOnThePriorityFails) {
  DoctorNode node;
  auto dcb = DoctorNode::healthyDcb();
  dcb.pfc_enabled = (1 << 4) | (1 << 5);  // PFC on the wrong priorities
  node.setDcb("ens1f1", dcb);
  const DoctorReport r = node.run();
  const CheckResult* pfc = r.find("pfc", "ens1f1");
  ASSERT_NE(pfc, nullptr);
  EXPECT_EQ(pfc->verdict, Verdict::kFail);
  EXPECT_EQ(ev(pfc, "pfc_enabled"), "4,5");
  EXPECT_EQ(ev(pfc, "priority"), "3");
  EXPECT_THAT(pfc->remedy, HasSubstr("prio-pfc 3:on"));
  EXPECT_THAT(nonPass(r), ElementsAre("pfc ens1f1 FAIL"));
  EXPECT_EQ(r.exitCode(), 1);
}

TEST(DoctorLossless, PfcDisabledEverywhereSaysNone) {
  DoctorNode node;
  auto dcb = DoctorNode::healthyDcb();
  dcb.pfc_enabled = 0;
  node.setDcb("ens1f0", dcb);
  EXPECT_EQ(ev(node.run().find("pfc", "ens1f0"), "pfc_enabled"), "none");
}

TEST(DoctorLossless, LosslessPriorityIsAnOption) {
  DoctorNode node;
  for (const auto& p : node.dataPorts()) node.setDcb(p, DoctorNode::healthyDcb(4));
  EXPECT_EQ(node.run().find("pfc", "ens1f0")->verdict, Verdict::kFail);
  EXPECT_THAT(nonPass(node.run({.lossless_priority = 4})), IsEmpty());
}

TEST(DoctorLossless, TrustMismatchAcrossPortsFailsTheOutlier) {
  DoctorNode node;
  auto pcp = DoctorNode::healthyDcb();
  pcp.apps.clear();  // no DSCP entries: trust pcp
  node.setDcb("ens2f1", pcp);
  const DoctorReport r = node.run();
  const CheckResult* t = r.find("trust", "ens2f1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->verdict, Verdict::kFail);
  EXPECT_EQ(ev(t, "trust"), "pcp");
  EXPECT_EQ(ev(t, "node_trust"), "dscp (3 of 4 ports)");
  EXPECT_THAT(t->remedy, HasSubstr("--trust dscp"));
  EXPECT_EQ(r.find("dscp_map", "ens2f1"), nullptr);  // not applicable with trust pcp
  EXPECT_THAT(nonPass(r), ElementsAre("trust ens2f1 FAIL"));
}

TEST(DoctorLossless, AllPortsTrustPcpIsConsistent) {
  DoctorNode node;
  auto pcp = DoctorNode::healthyDcb();
  pcp.apps.clear();
  for (const auto& p : node.dataPorts()) node.setDcb(p, pcp);
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), IsEmpty());
  EXPECT_EQ(ev(r.find("trust", "ens1f0"), "node_trust"), "pcp (4 of 4 ports)");
  EXPECT_TRUE(r.all("dscp_map").empty());
}

TEST(DoctorLossless, DscpMapNotCoveringThePriorityFails) {
  DoctorNode node;
  auto dcb = DoctorNode::healthyDcb();
  dcb.apps = {DcbApp{.selector = 5, .priority = 4, .protocol = 26},
              DcbApp{.selector = 5, .priority = 6, .protocol = 48}};
  node.setDcb("ens1f0", dcb);
  const DoctorReport r = node.run();
  const CheckResult* m = r.find("dscp_map", "ens1f0");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, Verdict::kFail);
  EXPECT_EQ(ev(m, "dscp_to_priority"), "none");
  EXPECT_EQ(ev(m, "map"), "4:26 6:48");
  EXPECT_THAT(m->remedy, HasSubstr("dscp-prio 26:3"));
  EXPECT_THAT(nonPass(r), ElementsAre("dscp_map ens1f0 FAIL"));
}

TEST(DoctorLossless, PortMissingFromTheNetnsIsUnknown) {
  DoctorNode node;
  // The sysfs root shows a port this netlink socket cannot see (e.g. another netns).
  auto l = node.kernel().link(FakeKernel::kHost, "ens1f0");
  ASSERT_TRUE(l.has_value());
  node.kernel().addNetns("elsewhere");
  auto h = node.kernel().netnsHandle("elsewhere");
  ASSERT_TRUE(node.netlink().moveToNetns(l->info.ifindex, h.fd()).ok());
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("pfc", "ens1f0")->verdict, Verdict::kUnknown);
  EXPECT_EQ(ev(r.find("pfc", "ens1f0"), "dcb"), "port not in this network namespace");
}

TEST(DoctorLossless, NetlinkFailureIsUnknownWithTheError) {
  DoctorNode node;
  node.kernel().failCall(FakeOp::kDcb, EPERM);
  const DoctorReport r = node.run();
  const auto pfcs = r.all("pfc");
  ASSERT_EQ(pfcs.size(), 4u);
  EXPECT_EQ(pfcs[0]->verdict, Verdict::kUnknown);
  EXPECT_THAT(ev(pfcs[0], "dcb"), HasSubstr("netlink: "));
  EXPECT_EQ(pfcs[1]->verdict, Verdict::kPass);  // one failed call, the others answered
}

TEST(DoctorLossless, NoNetlinkMakesEveryPortUnknown) {
  DoctorNode node;
  const DoctorReport r = node.run({}, nullptr, /*with_netlink=*/false);
  for (const auto* pfc : r.all("pfc")) {
    EXPECT_EQ(pfc->verdict, Verdict::kUnknown);
    EXPECT_EQ(ev(pfc, "dcb"), "no netlink socket");
  }
  EXPECT_TRUE(r.all("trust").empty());
}

TEST(DoctorLossless, InfinibandPortsHaveNoDcbOrMtuChecks) {
  const std::string topo = R"({ "host_bridges": [ { "domain": 0, "bus": "0x00", "numa_node": 0,
      "root_ports": [ { "switch": { "downstream": [
        { "nic": { "name": "ib0", "ports": 2, "vfs_per_port": 0, "total_vfs": 0,
                   "link_layer": "InfiniBand" } },
        { "gpu": {} } ] } } ] } ] })";
  DoctorNode node(topo, 4092);  // IPoIB MTU: not the RDMA MTU, so not judged
  const DoctorReport r = node.run();
  EXPECT_TRUE(r.all("pfc").empty());
  EXPECT_TRUE(r.all("mtu").empty());
  EXPECT_EQ(ev(r.find("rdma_port", "mlx5_0/1"), "link_layer"), "InfiniBand");
  EXPECT_EQ(r.find("rdma_port", "mlx5_0/1")->value("roce_v2_gids"), nullptr);
  EXPECT_THAT(nonPass(r), IsEmpty());
}

}  // namespace
}  // namespace rdmanet::doctor
