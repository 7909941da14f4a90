// The rest of the lossless triad on simulated nodes: global pause (fake ethtool reader), ECN
// enable per priority and the CNP priority/DSCP (files in the shapes MLNX_OFED's en_sysfs.c and
// upstream mlx5_ib's cong.c debugfs give; check_ecn.cc cites both).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>

#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

std::string pciOf(const DoctorNode& node, const std::string& netdev) {
  for (const auto& nd : node.built().netdevs) {
    if (nd.name == netdev) return nd.pci.str();
  }
  return "<no " + netdev + ">";
}

TEST(DoctorPause, PauseOffOnAPfcPortPasses) {
  DoctorNode node;
  const DoctorReport r = node.run();
  const CheckResult* p = r.find("pause", "ens1f0");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->verdict, Verdict::kPass);
  EXPECT_EQ(ev(p, "rx"), "off");
  EXPECT_EQ(ev(p, "tx"), "off");
  EXPECT_EQ(ev(p, "pfc"), "on (priority 3)");
}

TEST(DoctorPause, PauseOnAPfcPortFailsWithTheEthtoolRemedy) {
  DoctorNode node;
  node.pause().set("ens1f1", PauseState{.autoneg = true, .rx = true, .tx = false});
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("pause ens1f1 FAIL"));
  const CheckResult* p = r.find("pause", "ens1f1");
  EXPECT_EQ(ev(p, "autoneg"), "on");
  EXPECT_EQ(ev(p, "rx"), "on");
  EXPECT_THAT(p->remedy, HasSubstr("ethtool -A ens1f1 autoneg off rx off tx off"));
}

TEST(DoctorPause, PauseOnWithoutPfcWarns) {
  DoctorNode node;
  DcbState no_pfc = DoctorNode::healthyDcb();
  no_pfc.pfc_enabled = 0;
  node.setDcb("ens2f0", no_pfc);
  node.setEcn("ens2f0", 3, true, true);
  node.pause().set("ens2f0", PauseState{.rx = true, .tx = true});
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("pfc ens2f0 FAIL", "pause ens2f0 WARN"));
  EXPECT_EQ(ev(r.find("pause", "ens2f0"), "pfc"), "off");
}

TEST(DoctorPause, UnreadablePauseIsUnknownWithTheReason) {
  DoctorNode node;
  node.pause().fail("ens1f0", EOPNOTSUPP);
  node.pause().fail("ens1f1", ENODEV);
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("pause", "ens1f0")->verdict, Verdict::kUnknown);
  EXPECT_EQ(ev(r.find("pause", "ens1f0"), "pause"), "driver reports no pause settings");
  EXPECT_EQ(ev(r.find("pause", "ens1f1"), "pause"), "port not in this network namespace");
  EXPECT_THAT(r.find("pause", "ens1f1")->remedy, HasSubstr("ethtool -a ens1f1"));
}

TEST(DoctorEcn, EcnOnForTheLosslessPriorityPasses) {
  DoctorNode node;
  const DoctorReport r = node.run();
  const CheckResult* e = r.find("ecn", "ens1f0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->verdict, Verdict::kPass);
  EXPECT_EQ(ev(e, "ecn_rp"), "1");
  EXPECT_EQ(ev(e, "ecn_np"), "1");
  const CheckResult* c = r.find("cnp", "ens1f0");
  EXPECT_EQ(c->verdict, Verdict::kPass);
  EXPECT_EQ(ev(c, "cnp_dscp"), "48");
  EXPECT_EQ(ev(c, "cnp_priority"), "6");
  EXPECT_EQ(ev(c, "source"), "/sys/class/net/ens1f0/ecn/roce_np");
}

TEST(DoctorEcn, PfcWithoutEcnFails) {
  DoctorNode node;
  node.setEcn("ens1f0", 3, /*rp=*/false, /*np=*/true);
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("ecn ens1f0 FAIL"));
  const CheckResult* e = r.find("ecn", "ens1f0");
  EXPECT_EQ(ev(e, "ecn_rp"), "0");
  EXPECT_EQ(ev(e, "pfc"), "on");
  EXPECT_THAT(e->remedy, HasSubstr("PFC without ECN: storms under incast"));
  EXPECT_THAT(e->remedy, HasSubstr("echo 1 > /sys/class/net/ens1f0/ecn/roce_rp/enable/3"));
}

TEST(DoctorEcn, OnlyTheLosslessPriorityCounts) {
  DoctorNode node;
  node.setEcn("ens1f0", 5, false, false);  // another priority: not judged
  EXPECT_THAT(nonPass(node.run()), IsEmpty());
  // Judged for priority 5, where PFC is off too: ECN off without PFC warns.
  EXPECT_EQ(node.run({.lossless_priority = 5}).find("ecn", "ens1f0")->verdict, Verdict::kWarn);
}

TEST(DoctorEcn, EcnOffWithoutPfcWarns) {
  DoctorNode node;
  DcbState no_pfc = DoctorNode::healthyDcb();
  no_pfc.pfc_enabled = 0;
  node.setDcb("ens2f1", no_pfc);
  node.setEcn("ens2f1", 3, false, false);
  EXPECT_THAT(nonPass(node.run()), ElementsAre("pfc ens2f1 FAIL", "ecn ens2f1 WARN"));
}

TEST(DoctorEcn, UpstreamDriverIsUnknownNeverPassAndCnpComesFromDebugfs) {
  // Upstream mlx5 (Debian 12's 6.1): no ecn/ directory; cong.c's debugfs has the CNP values.
  DoctorNode node;
  node.removeEcn("ens1f0");
  const std::string cc = "/sys/kernel/debug/mlx5/" + pciOf(node, "ens1f0") + "/cc_params";
  node.tree().writeAttr(cc + "/np_cnp_dscp", "48\n");
  node.tree().writeAttr(cc + "/np_cnp_prio", "6\n");
  node.tree().writeAttr(cc + "/np_cnp_prio_mode", "0\n");
  node.tree().writeAttr(cc + "/rp_gd", "11\n");
  const DoctorReport r = node.run();
  const CheckResult* e = r.find("ecn", "ens1f0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->verdict, Verdict::kUnknown);
  EXPECT_EQ(ev(e, "ecn_rp"), "unknown");
  EXPECT_THAT(ev(e, "source"), HasSubstr("upstream mlx5 has no per-priority ECN enable"));
  const CheckResult* c = r.find("cnp", "ens1f0");
  EXPECT_EQ(c->verdict, Verdict::kPass);
  EXPECT_EQ(ev(c, "cnp_dscp"), "48");
  EXPECT_EQ(ev(c, "cnp_priority"), "6");
  EXPECT_EQ(ev(c, "cnp_prio_mode"), "0");
  EXPECT_EQ(ev(c, "source"), cc);
}

TEST(DoctorEcn, NothingExposedIsUnknownForBoth) {
  DoctorNode node;
  node.removeEcn("ens2f0");
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("ecn ens2f0 UNKNOWN", "cnp ens2f0 UNKNOWN"));
  EXPECT_THAT(ev(r.find("cnp", "ens2f0"), "source"), HasSubstr("mount debugfs"));
}

}  // namespace
}  // namespace rdmanet::doctor
