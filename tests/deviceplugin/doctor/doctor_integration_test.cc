// The real rdmanet-doctor binary against simulated nodes (fake sysfs trees built by the
// simnode builder), with its real netlink socket in this process's netns. The simulated ports
// are not real DCB-capable links here, so the DCB checks must come out UNKNOWN.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/deviceplugin/doctor/doctor_node.h"
#include "tests/deviceplugin/doctor/run_command.h"

namespace rdmanet::doctor {
namespace {

using testing::DoctorNode;
using ::testing::HasSubstr;

using BinRun = testing::CommandResult;

BinRun doctor(const std::string& args) {
  return testing::runCommand(std::string(RDMANET_DOCTOR_BIN) + " " + args);
}

TEST(DoctorBinary, DefaultTopologyTableShowsMatrixAndFailsBelowExpectedMtu) {
  DoctorNode node(testing::repoTopology("default.json"), 0, 0);  // MTU 9000, 100G
  const BinRun r = doctor("--expect-mtu 9216 --sysfs-root " + node.root().string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("mlx5_10  SYS   SYS   PIX   PHB   1     pci0000:80  ens2f0"));
  EXPECT_THAT(r.out, HasSubstr("mtu=9000 expected_min=9216"));
  EXPECT_THAT(r.out, HasSubstr("-> set jumbo frames"));
}

TEST(DoctorBinary, JsonOnDefaultTopologyPassesWithoutDcbData) {
  DoctorNode node(testing::repoTopology("default.json"), 0, 0);
  const BinRun r = doctor("--json --sysfs-root " + node.root().string());
  EXPECT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["matrix"]["distance"]["mlx5_0"]["GPU1"], "NODE");
  int pfc = 0;
  for (const auto& c : j["checks"]) {
    if (c["check"] == "pfc") {
      ++pfc;
      EXPECT_EQ(c["verdict"], "UNKNOWN") << c.dump();  // never PASS without DCB data
    }
    if (c["check"] == "mtu" || c["check"] == "link") {
      EXPECT_EQ(c["verdict"], "PASS") << c.dump();
    }
  }
  EXPECT_EQ(pfc, 4);
}

TEST(DoctorBinary, PortDownExitsOne) {
  DoctorNode node;
  node.tree().setNetdevUp("ens1f1", false);
  const BinRun r = doctor("--json --sysfs-root " + node.root().string());
  EXPECT_EQ(r.rc, 1);
  const auto j = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& c : j["checks"]) {
    if (c["check"] == "link" && c["device"] == "ens1f1") {
      EXPECT_EQ(c["verdict"], "FAIL");
      EXPECT_EQ(c["evidence"]["operstate"], "down");
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

TEST(DoctorBinary, BaselineThenGrowth) {
  DoctorNode node;
  const std::string base = (node.root() / "b.json").string();
  const std::string args = "--json --baseline " + base + " --sysfs-root " + node.root().string();
  ASSERT_EQ(doctor(args).rc, 0);
  node.tree().writeAttr("/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors", "3");
  const BinRun r = doctor(args);
  EXPECT_EQ(r.rc, 1);  // receive errors growing is a FAIL
  const auto j = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& d : j["deltas"]) {
    if (d["port"] == "mlx5_0/1" && d["counter"] == "port_rcv_errors") {
      EXPECT_EQ(d["delta"], 3);
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

TEST(DoctorBinary, DotOutputIsGraphviz) {
  DoctorNode node(testing::repoTopology("default.json"), 0, 0);
  const BinRun r = doctor("--dot --sysfs-root " + node.root().string());
  EXPECT_TRUE(r.out.starts_with("digraph rdmanet_node {"));
  EXPECT_THAT(r.out, HasSubstr("subgraph cluster_numa1"));
}

TEST(DoctorBinary, UsageErrorExitsTwo) {
  EXPECT_EQ(doctor("--expect-mtu nine").rc, 2);
  EXPECT_EQ(doctor("--sysfs-root /nonexistent/doctor/root").rc, 2);
}

}  // namespace
}  // namespace rdmanet::doctor
