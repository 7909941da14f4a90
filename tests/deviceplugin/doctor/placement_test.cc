// NUMA, the NIC x GPU distance matrix, and ACS on the bridges between NICs and GPUs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

// The default simulated topology (hack/topologies/default.json), worked out by hand from its
// description: socket 0 has ens1 and GPU0 behind one switch (PIX) and GPU1 behind a switch
// under a second root complex of the same NUMA node (NODE); socket 1 has ens2 and GPU2 behind
// one switch (PIX) and GPU3 behind a switch on another root port of the same root complex
// (PHB); across sockets everything is SYS.
TEST(DoctorTopology, DefaultTopologyMatchesHandWrittenMatrix) {
  DoctorNode node(testing::repoTopology("default.json"), 0, 0);
  const DoctorReport r = node.run();
  const DistanceMatrix& m = r.matrix;

  std::vector<std::string> gpus, gpu_pcis;
  for (const auto& g : m.gpus) {
    gpus.push_back(g.label);
    gpu_pcis.push_back(g.pci);
  }
  EXPECT_THAT(gpus, ElementsAre("GPU0", "GPU1", "GPU2", "GPU3"));
  EXPECT_THAT(gpu_pcis,
              ElementsAre("0000:04:00.0", "0000:43:00.0", "0000:84:00.0", "0000:87:00.0"));

  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      // NIC        GPU0    GPU1    GPU2   GPU3
      {"mlx5_0", {"PIX", "NODE", "SYS", "SYS"}},
      {"mlx5_1", {"PIX", "NODE", "SYS", "SYS"}},
      {"mlx5_10", {"SYS", "SYS", "PIX", "PHB"}},
      {"mlx5_11", {"SYS", "SYS", "PIX", "PHB"}},
  };
  ASSERT_EQ(m.nics.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(m.nics[i].label, expected[i].first);
    std::vector<std::string> row;
    for (Distance d : m.cells[i]) row.emplace_back(distanceName(d));
    EXPECT_EQ(row, expected[i].second) << expected[i].first;
  }
  EXPECT_EQ(m.nics[2].netdev, "ens2f0");
  EXPECT_EQ(m.nics[2].numa_node, 1);
  EXPECT_EQ(m.at("mlx5_11", "GPU3"), "PHB");

  // Per GPU: its nearest NIC, and a WARN where that is beyond the PCIe switch.
  EXPECT_EQ(r.find("topology", "GPU0")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("topology", "GPU0"), "nearest_nic"), "mlx5_0");
  EXPECT_EQ(r.find("topology", "GPU1")->verdict, Verdict::kWarn);
  EXPECT_EQ(ev(r.find("topology", "GPU1"), "distance"), "NODE");
  EXPECT_EQ(ev(r.find("topology", "GPU3"), "distance"), "PHB");
  EXPECT_EQ(ev(r.find("topology", "GPU3"), "nearest_nic"), "mlx5_10");
}

TEST(DoctorNuma, GpuAloneOnANumaNodeWarns) {
  // The healthy node plus a third NUMA node holding only a GPU.
  const std::string topo = R"({ "host_bridges": [
    { "domain": 0, "bus": "0x00", "numa_node": 0,
      "root_ports": [ { "switch": { "downstream": [
        { "nic": { "name": "ens1", "ports": 2, "vfs_per_port": 0, "total_vfs": 0 } },
        { "gpu": {} } ] } } ] },
    { "domain": 0, "bus": "0xc0", "numa_node": 2,
      "root_ports": [ { "gpu": {} } ] } ] })";
  DoctorNode node(topo);
  const DoctorReport r = node.run();
  const CheckResult* lonely = r.find("numa", "GPU1");
  ASSERT_NE(lonely, nullptr);
  EXPECT_EQ(lonely->verdict, Verdict::kWarn);
  EXPECT_EQ(ev(lonely, "numa_node"), "2");
  EXPECT_EQ(ev(lonely, "pci"), "0000:c1:00.0");
  EXPECT_EQ(ev(lonely, "local_nics"), "none");
  EXPECT_THAT(lonely->remedy, HasSubstr("RDMA bandwidth low"));
  EXPECT_EQ(r.find("numa", "GPU0")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("numa", "GPU0"), "local_nics"), "mlx5_0,mlx5_1");
  EXPECT_THAT(nonPass(r), ElementsAre("numa GPU1 WARN", "topology GPU1 WARN"));
  EXPECT_EQ(r.matrix.at("mlx5_0", "GPU1"), "SYS");
}

TEST(DoctorNuma, GpuWithoutNumaNodeIsUnknown) {
  DoctorNode node;
  node.tree().writeAttr("/sys/bus/pci/devices/0000:05:00.0/numa_node", "-1");
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("numa", "GPU1")->verdict, Verdict::kUnknown);
  EXPECT_EQ(ev(r.find("numa", "GPU1"), "numa_node"), "-1");
}

TEST(DoctorAcs, RedirectOnTheSwitchBetweenNicAndGpuFails) {
  std::string topo = testing::kHealthyTopology;
  // Socket 0's switch turns on ACS redirect on all its downstream ports.
  const std::string from = R"("switch": { "downstream": [
        { "nic": { "name": "ens1")";
  const auto at = topo.find(from);
  ASSERT_NE(at, std::string::npos);
  topo.replace(at, std::string(R"("switch": {)").size(), R"("switch": { "acs_redirect": true,)");
  DoctorNode node(topo);
  const DoctorReport r = node.run();

  const CheckResult* a = r.find("acs", "ens1f0<->GPU0");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::kFail);
  EXPECT_EQ(ev(a, "distance"), "PIX");
  // The NIC's and the GPU's downstream ports, decoded from the ACS control register.
  EXPECT_EQ(ev(a, "0000:02:00.0"), "SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+");
  EXPECT_EQ(ev(a, "0000:02:01.0"), "SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+");
  EXPECT_THAT(a->remedy, HasSubstr("disable ACS P2P redirect on 0000:02:00.0,0000:02:01.0"));
  // Socket 1's switch is clean.
  const CheckResult* b = r.find("acs", "ens2f0<->GPU2");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->verdict, Verdict::kPass);
  EXPECT_EQ(ev(b, "0000:82:00.0"), "SrcValid- ReqRedir- CmpltRedir- UpstreamFwd-");
  EXPECT_THAT(nonPass(r), ElementsAre("acs ens1f0<->GPU0 FAIL", "acs ens1f0<->GPU1 FAIL",
                                      "acs ens1f1<->GPU0 FAIL", "acs ens1f1<->GPU1 FAIL"));
}

TEST(DoctorAcs, RedirectOnlyOnTheGpuPortStillFails) {
  std::string topo = testing::kHealthyTopology;
  const std::string gpu = R"({ "gpu": {} }, { "gpu": {} } ] } } ] },
    { "domain": 0, "bus": "0x80")";
  const auto at = topo.find(gpu);
  ASSERT_NE(at, std::string::npos);
  topo.replace(at, std::string(R"({ "gpu": {} })").size(),
               R"({ "acs_redirect": true, "gpu": {} })");
  DoctorNode node(topo);
  const DoctorReport r = node.run();
  EXPECT_THAT(nonPass(r), ElementsAre("acs ens1f0<->GPU0 FAIL", "acs ens1f1<->GPU0 FAIL"));
  EXPECT_EQ(ev(r.find("acs", "ens1f0<->GPU0"), "0000:02:00.0"),
            "SrcValid- ReqRedir- CmpltRedir- UpstreamFwd-");
}

TEST(DoctorAcs, TruncatedConfigSpaceIsUnknown) {
  DoctorNode node;
  // What a non-root reader gets: the first 64 bytes.
  node.tree().writeAttr("/sys/bus/pci/devices/0000:02:00.0/config", std::string(64, '\0'));
  const DoctorReport r = node.run();
  const CheckResult* a = r.find("acs", "ens1f0<->GPU0");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->verdict, Verdict::kUnknown);
  EXPECT_THAT(ev(a, "0000:02:00.0"), HasSubstr("unreadable"));
  EXPECT_THAT(a->remedy, HasSubstr("run as root"));
}

TEST(DoctorAcs, PairsAcrossTheRootComplexAreNotChecked) {
  DoctorNode node(testing::repoTopology("default.json"), 0, 0);
  const DoctorReport r = node.run();
  std::vector<std::string> pairs;
  for (const auto* a : r.all("acs")) pairs.push_back(a->device);
  EXPECT_THAT(pairs,
              ElementsAre("ens1f0<->GPU0", "ens1f1<->GPU0", "ens2f0<->GPU2", "ens2f1<->GPU2"));
}

}  // namespace
}  // namespace rdmanet::doctor
