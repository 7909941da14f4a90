// The MTU chain (pod <= VF <= PF) and the RoCE active MTU against the netdev MTU, with the RDMA
// facts from the fake verbs, and the sysfs fallback when verbs cannot open a device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>

#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

// What the tree says about `device`, as a starting point for verbs answers a test changes.
DeviceFacts treeFacts(DoctorNode& node, const std::string& device) {
  auto dev = readRdmaDevice(node.sysfs(), device);
  if (!dev.ok()) throw std::runtime_error(dev.error().msg);
  return factsFromSysfs(node.sysfs(), *dev);
}

TEST(DoctorMtuChain, HealthyChainPassesWithEveryHop) {
  DoctorNode node;
  const DoctorReport r = node.run({.pod_mtu = 9000});
  const CheckResult* c = r.find("mtu_chain", "ens1f0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kPass);
  EXPECT_EQ(ev(c, "pf_mtu"), "9000");
  EXPECT_EQ(ev(c, "vf_mtus"), "ens1f0v0=9000,ens1f0v1=9000");
  EXPECT_EQ(ev(c, "pod_mtu"), "9000");
  EXPECT_THAT(nonPass(r), IsEmpty());
}

TEST(DoctorMtuChain, PodMtuAbovePfFailsNamingBoth) {
  DoctorNode node;
  const DoctorReport r = node.run({.pod_mtu = 9216});
  const CheckResult* c = r.find("mtu_chain", "ens2f0");
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_THAT(ev(c, "problems"), HasSubstr("pod MTU 9216 > PF ens2f0 MTU 9000"));
  EXPECT_THAT(ev(c, "problems"), HasSubstr("pod MTU 9216 > VF ens2f0v0 MTU 9000"));
}

TEST(DoctorMtuChain, VfAbovePfFails) {
  DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens1f1v1/mtu", "9100");
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("mtu_chain ens1f1 FAIL"));
  EXPECT_EQ(ev(r.find("mtu_chain", "ens1f1"), "problems"),
            "VF ens1f1v1 MTU 9100 > PF ens1f1 MTU 9000");
}

TEST(DoctorMtuChain, PodMtuIsNotCheckedUnlessGiven) {
  DoctorNode node;
  EXPECT_EQ(ev(node.run().find("mtu_chain", "ens1f0"), "pod_mtu"), "not given");
}

TEST(DoctorRoceMtu, ActiveMtuIsTheLargestTheNetdevMtuAllows) {
  DoctorNode node;
  const DoctorReport r = node.run();
  const CheckResult* m = r.find("roce_mtu", "mlx5_0/1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, Verdict::kPass);
  EXPECT_EQ(ev(m, "active_mtu"), "4096");
  EXPECT_EQ(ev(m, "expected"), "4096");
  EXPECT_EQ(ev(m, "source"), "verbs");
}

TEST(DoctorRoceMtu, ActiveMtuBelowWhatTheNetdevAllowsFails) {
  DoctorNode node;
  DeviceFacts f = treeFacts(node, "mlx5_1");
  f.ports[0].active_mtu = 1024;  // a port capped below the 9000 netdev's 4096
  f.ports[0].max_mtu = 4096;
  node.pinVerbs(f);
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("roce_mtu mlx5_1/1 FAIL"));
  EXPECT_THAT(r.find("roce_mtu", "mlx5_1/1")->remedy,
              HasSubstr("RoCE active MTU 1024 is not the 4096 that netdev MTU 9000 allows"));
}

TEST(DoctorRoceMtu, PortMaxMtuCapsTheExpectation) {
  DoctorNode node;
  DeviceFacts f = treeFacts(node, "mlx5_1");
  f.ports[0].active_mtu = 2048;
  f.ports[0].max_mtu = 2048;
  node.pinVerbs(f);
  EXPECT_EQ(node.run().find("roce_mtu", "mlx5_1/1")->verdict, Verdict::kPass);
}

TEST(DoctorVerbs, DeviceVerbsCannotOpenFallsBackToSysfsAndSaysSo) {
  DoctorNode node;
  node.failVerbs("mlx5_6", EACCES);
  const DoctorReport r = node.run();
  const CheckResult* port = r.find("rdma_port", "mlx5_6/1");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->verdict, Verdict::kPass);  // state and GIDs still come from sysfs
  EXPECT_THAT(ev(port, "source"), HasSubstr("sysfs (verbs: ibv_open_device(mlx5_6)"));
  EXPECT_THAT(ev(port, "source"), HasSubstr("Permission denied"));
  EXPECT_EQ(r.find("roce_mtu", "mlx5_6/1")->verdict, Verdict::kUnknown);
  EXPECT_EQ(ev(r.find("rdma_port", "mlx5_0/1"), "source"), "verbs");
}

TEST(DoctorVerbs, NoVerbsMeansSysfsEverywhereAndRoceMtuUnknown) {
  DoctorNode node;
  const DoctorReport r = node.run({}, nullptr, true, 1000, /*verbs=*/false);
  EXPECT_EQ(ev(r.find("rdma_port", "mlx5_0/1"), "source"), "sysfs (no verbs access)");
  for (const auto* m : r.all("roce_mtu")) EXPECT_EQ(m->verdict, Verdict::kUnknown);
}

TEST(DoctorVerbs, VerbsStateWinsOverSysfs) {
  // verbs is the source of truth when it answers: a port it reports DOWN fails even if the
  // sysfs copy (read at another moment) still said ACTIVE.
  DoctorNode node;
  DeviceFacts f = treeFacts(node, "mlx5_7");
  f.ports[0].state = "DOWN";
  f.ports[0].state_num = 1;
  f.ports[0].active_mtu = 4096;
  node.pinVerbs(f);
  const DoctorReport r = node.run();
  const CheckResult* port = r.find("rdma_port", "mlx5_7/1");
  EXPECT_EQ(port->verdict, Verdict::kFail);
  EXPECT_EQ(ev(port, "state"), "1: DOWN");
  EXPECT_EQ(ev(port, "source"), "verbs");
}

}  // namespace
}  // namespace rdmanet::doctor
