// Renderers: table, JSON, Graphviz and Prometheus text carry the report's data.
#include "deviceplugin/doctor/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/inventory/node.h"
#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using testing::DoctorNode;
using ::testing::HasSubstr;
using ::testing::Not;

// The line of `text` holding `needle`, and the line after it. (Not <regex>: GCC 12 warns inside
// it in the sanitizer build.)
std::pair<std::string, std::string> lineWith(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line, next;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) {
      std::getline(in, next);
      return {line, next};
    }
  }
  return {};
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(DoctorRenderTable, ShowsMatrixRowsRemediesAndSummary) {
  DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens2f1/mtu", "1500");
  const std::string t = renderTable(node.run());
  EXPECT_THAT(t, HasSubstr("NIC x GPU distance"));
  EXPECT_THAT(t, HasSubstr("GPU3  NUMA  PCIE ROOT   NETDEV\n"));
  EXPECT_THAT(t, HasSubstr("mlx5_0  PIX   PIX   SYS   SYS   0     pci0000:00  ens1f0"));
  EXPECT_THAT(t, HasSubstr("mlx5_6  SYS   SYS   PIX   PIX   1     pci0000:80  ens2f0"));
  EXPECT_THAT(t, HasSubstr("GPU2: 0000:84:00.0 (NUMA 1, PCIe root pci0000:80)"));
  const auto [mtu, remedy] = lineWith(t, "mtu=1500");
  EXPECT_TRUE(mtu.starts_with("mtu ")) << mtu;
  EXPECT_THAT(mtu, HasSubstr(" ens2f1 "));
  EXPECT_THAT(mtu, HasSubstr(" FAIL "));
  EXPECT_THAT(mtu, HasSubstr("mtu=1500 expected_min=9000 node_mtu=9000 (3 of 4 ports)"));
  EXPECT_THAT(remedy, HasSubstr("-> set jumbo frames: ip link set ens2f1 mtu 9000"));
  const auto [link, after] = lineWith(t, "operstate=up");
  EXPECT_TRUE(link.starts_with("link ")) << link;
  EXPECT_THAT(link, HasSubstr(" ens1f0 "));
  EXPECT_THAT(link, HasSubstr(" PASS "));
  EXPECT_THAT(after, Not(HasSubstr("->")));        // no remedy under a PASS
  EXPECT_THAT(t, HasSubstr("2 FAIL, 0 UNKNOWN"));  // mtu and mtu_chain (VFs at 9000)
}

TEST(DoctorRenderJson, CarriesChecksEvidenceMatrixAndDeltas) {
  DoctorNode node;
  const CounterSnapshot baseline = node.run().counters;
  node.tree().writeAttr("/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence", "9");
  node.setDcb("ens1f0", std::nullopt);
  const auto j = nlohmann::json::parse(renderJson(node.run({}, &baseline)));
  EXPECT_EQ(j["verdict"], "WARN");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["summary"]["UNKNOWN"], 1);
  EXPECT_EQ(j["summary"]["WARN"], 1);
  const auto& checks = j["checks"];
  auto pfc = std::find_if(checks.begin(), checks.end(), [](const auto& c) {
    return c["check"] == "pfc" && c["device"] == "ens1f0";
  });
  ASSERT_NE(pfc, checks.end());
  EXPECT_EQ((*pfc)["verdict"], "UNKNOWN");
  EXPECT_EQ((*pfc)["evidence"]["dcb"], "driver does not report DCB (no IEEE DCB attributes)");
  EXPECT_THAT((*pfc)["remedy"].get<std::string>(), HasSubstr("dcb pfc show"));
  EXPECT_EQ(j["matrix"]["distance"]["mlx5_6"]["GPU2"], "PIX");
  EXPECT_EQ(j["matrix"]["gpus"][3]["pci"], "0000:85:00.0");
  EXPECT_EQ(j["matrix"]["gpus"][3]["pcie_root"], "pci0000:80");
  EXPECT_EQ(j["matrix"]["nics"][0]["pcie_root"], "pci0000:00");
  EXPECT_EQ(j["counters"]["ports"]["mlx5_0/1"]["out_of_sequence"], 9);
  bool found = false;
  for (const auto& d : j["deltas"]) {
    if (d["port"] == "mlx5_0/1" && d["counter"] == "out_of_sequence") {
      found = true;
      EXPECT_EQ(d["delta"], 9);
      EXPECT_EQ(d["class"], "retransmit");
    }
  }
  EXPECT_TRUE(found);
}

TEST(DoctorRenderPrometheus, OneGaugePerCheckAndDeltasWithABaseline) {
  DoctorNode node;
  node.tree().writeAttr("/sys/class/net/ens2f1/mtu", "1500");
  node.setDcb("ens1f0", std::nullopt);
  const CounterSnapshot baseline = node.run().counters;
  node.tree().writeAttr("/sys/class/infiniband/mlx5_0/ports/1/hw_counters/roce_adp_retrans", "5");
  const DoctorReport r = node.run({}, &baseline);
  const std::string text = renderPrometheus(r);
  EXPECT_THAT(text, HasSubstr("# TYPE rdmanet_doctor_check gauge\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"mtu\",device=\"ens2f1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"mtu\",device=\"ens1f0\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"pfc\",device=\"ens1f0\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"counters\",device=\"mlx5_0/1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_rdma_counter{port=\"mlx5_0/1\",counter=\""
                              "roce_adp_retrans\",class=\"retransmit\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_counter_delta{port=\"mlx5_0/1\",counter=\""
                              "roce_adp_retrans\",class=\"retransmit\"} 5\n"));
  EXPECT_EQ(count(text, "rdmanet_doctor_check{"), r.results.size());
  // Unjudged counters (byte counts) stay out of the series.
  EXPECT_THAT(text, Not(HasSubstr("port_xmit_data")));
  // Every sample line is `name{labels} value`.
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    EXPECT_TRUE(line.starts_with("rdmanet_doctor_")) << line;
    const auto close = line.rfind("} ");
    ASSERT_NE(close, std::string::npos) << line;
    EXPECT_NE(line.find('{'), std::string::npos) << line;
    const std::string value = line.substr(close + 2);
    EXPECT_TRUE(!value.empty() && value.find_first_not_of("0123456789") == std::string::npos)
        << line;
  }
}

TEST(DoctorRenderPrometheus, NoDeltaSeriesWithoutBaseline) {
  DoctorNode node;
  EXPECT_THAT(renderPrometheus(node.run()), Not(HasSubstr("rdmanet_doctor_counter_delta")));
}

TEST(DoctorRenderPrometheus, LabelValuesAreEscaped) {
  DoctorReport r;
  r.results.push_back(
      CheckResult{.check = "x", .device = "a\"b\\c\nd", .verdict = Verdict::kWarn, .evidence = {}});
  EXPECT_THAT(renderPrometheus(r),
              HasSubstr("rdmanet_doctor_check{check=\"x\",device=\"a\\\"b\\\\c\\nd\"} 1\n"));
}

TEST(DoctorRenderDot, DefaultTopologyHasNumaClustersSwitchesAndDevices) {
  DoctorNode node(testing::repoTopology("default.json"), 0, 0);
  node.tree().writeAttr("/sys/class/net/ens1f0/mtu", "1500");  // one port below jumbo: FAIL
  const NodeInventory inv = scanNode(node.sysfs());
  const DoctorReport r = node.run();
  const std::string dot = renderDot(inv, &r);
  EXPECT_TRUE(dot.starts_with("digraph rdmanet_node {"));
  EXPECT_EQ(count(dot, "{"), count(dot, "}"));
  EXPECT_EQ(count(dot, "subgraph cluster_numa"), 2u);
  EXPECT_EQ(count(dot, "subgraph cluster_switch_"), 4u);
  EXPECT_EQ(count(dot, "shape=box3d"), 4u);     // GPUs
  EXPECT_EQ(count(dot, "shape=invhouse"), 3u);  // root complexes 00, 40, 80
  EXPECT_THAT(dot, HasSubstr("ens1f0 | mlx5_0\\n0000:03:00.0\\n100G MTU 1500 4 VFs"));
  EXPECT_THAT(dot, HasSubstr("ens2f0 | mlx5_10\\n0000:83:00.0\\n100G MTU 9000 4 VFs"));
  EXPECT_THAT(dot, HasSubstr("\"rc:pci0000:00\" -> \"br:0000:00:01.0\";"));
  EXPECT_THAT(dot, HasSubstr("\"br:0000:02:00.0\" -> \"dev:0000:03:00.0\";"));
  EXPECT_THAT(dot, HasSubstr("\"br:0000:86:00.0\" -> \"dev:0000:87:00.0\";"));
  // MTU 1500 < 9000 fails that port: its NIC is drawn red, the others are not.
  EXPECT_THAT(dot, HasSubstr("\"dev:0000:03:00.0\" [label=\"ens1f0 | mlx5_0"));
  EXPECT_THAT(lineWith(dot, "\"dev:0000:03:00.0\" [").first, HasSubstr("fillcolor=\"#f8c8c8\""));
  EXPECT_THAT(lineWith(dot, "\"dev:0000:83:00.0\" [").first,
              Not(HasSubstr("fillcolor=\"#f8c8c8\"")));
}

TEST(DoctorRenderDot, AcsRedirectMarksTheBridge) {
  std::string topo = testing::kHealthyTopology;
  const auto at = topo.find(R"("switch": {)");
  topo.replace(at, std::string(R"("switch": {)").size(), R"("switch": { "acs_redirect": true,)");
  DoctorNode node(topo);
  const DoctorReport r = node.run();
  const std::string dot = renderDot(scanNode(node.sysfs()), &r);
  EXPECT_THAT(dot, HasSubstr("downstream\\n0000:02:00.0\\nACS redirect ON"));
  EXPECT_THAT(dot, Not(HasSubstr("0000:82:00.0\\nACS redirect ON")));
}

// Graphviz itself accepts the output (hack/install-deps.sh installs graphviz for this test).
TEST(DoctorRenderDot, GraphvizRendersIt) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "graphviz `dot` not installed (hack/install-deps.sh installs it)";
  }
  DoctorNode node(testing::repoTopology("default.json"), 0, 0);
  const DoctorReport r = node.run();
  const auto file = node.root() / "node.dot";
  std::ofstream(file) << renderDot(scanNode(node.sysfs()), &r);
  const auto svg = node.root() / "node.svg";
  const std::string cmd = "dot -Tsvg -o " + svg.string() + " " + file.string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("GPU3"));
  EXPECT_THAT(text, HasSubstr("NUMA node 1"));
}

}  // namespace
}  // namespace rdmanet::doctor
