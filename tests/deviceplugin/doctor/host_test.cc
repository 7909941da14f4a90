// Host-side checks: the GPUDirect peer-memory module, the CPU governor and deep C-states.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

TEST(DoctorGpuDirect, PeerMemModuleLoadedPasses) {
  DoctorNode node;
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("gpudirect", "node")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("gpudirect", "node"), "peer_module"), "nvidia_peermem");
  EXPECT_EQ(ev(r.find("gpudirect", "node"), "gpus"), "4");
}

TEST(DoctorGpuDirect, LegacyNvPeerMemCounts) {
  DoctorNode node;
  node.writeModules({"nv_peer_mem", "nvidia"});
  EXPECT_EQ(ev(node.run().find("gpudirect", "node"), "peer_module"), "nv_peer_mem");
}

TEST(DoctorGpuDirect, MissingPeerMemWarnsWhenGpusArePresent) {
  DoctorNode node;
  node.writeModules({"nvidia", "mlx5_ib"});
  const DoctorReport r = node.run();
  const CheckResult* g = r.find("gpudirect", "node");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->verdict, Verdict::kWarn);
  EXPECT_EQ(ev(g, "peer_module"), "not loaded");
  EXPECT_EQ(ev(g, "nvidia"), "loaded");
  EXPECT_THAT(g->remedy, HasSubstr("modprobe nvidia_peermem"));
  EXPECT_THAT(nonPass(r), ElementsAre("gpudirect node WARN"));
}

TEST(DoctorGpuDirect, UnreadableModuleListIsUnknown) {
  DoctorNode node;
  node.tree().remove("/proc/modules");
  EXPECT_EQ(node.run().find("gpudirect", "node")->verdict, Verdict::kUnknown);
}

TEST(DoctorGpuDirect, ModuleDirInSysModuleCounts) {
  DoctorNode node;
  node.tree().remove("/proc/modules");
  node.tree().writeAttr("/sys/module/nvidia_peermem/refcnt", "0");
  EXPECT_EQ(node.run().find("gpudirect", "node")->verdict, Verdict::kPass);
}

TEST(DoctorGpuDirect, NoGpusNoCheck) {
  const std::string topo = R"({ "host_bridges": [ { "domain": 0, "bus": "0x00", "numa_node": 0,
      "root_ports": [ { "nic": { "name": "ens1", "ports": 1, "vfs_per_port": 0,
                                 "total_vfs": 0 } } ] } ] })";
  DoctorNode node(topo);
  node.writeModules({});
  const DoctorReport r = node.run();
  EXPECT_TRUE(r.all("gpudirect").empty());
  EXPECT_TRUE(r.all("numa").empty());
  EXPECT_TRUE(r.matrix.gpus.empty());
  EXPECT_EQ(r.exitCode(), 0);
}

TEST(DoctorCpu, PowersaveGovernorWarnsWithCounts) {
  DoctorNode node;
  node.writeCpus(4, {"performance", "powersave"}, false);
  const DoctorReport r = node.run();
  const CheckResult* g = r.find("cpu_governor", "node");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->verdict, Verdict::kWarn);
  EXPECT_EQ(ev(g, "governors"), "performance:2,powersave:2");
  EXPECT_EQ(ev(g, "cpus"), "4");
  EXPECT_THAT(g->remedy, HasSubstr("cpupower frequency-set -g performance"));
  EXPECT_THAT(nonPass(r), ElementsAre("cpu_governor node WARN"));
}

TEST(DoctorCpu, DeepCStatesEnabledWarn) {
  DoctorNode node;
  node.writeCpus(2, {"performance"}, /*deep_states_enabled=*/true);
  const DoctorReport r = node.run();
  const CheckResult* c = r.find("cpu_cstates", "node");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kWarn);
  EXPECT_EQ(ev(c, "deep_states"), "C1E (10us) on 2 cpus, C6 (133us) on 2 cpus");
  EXPECT_EQ(ev(c, "cpuidle_driver"), "intel_idle");
  EXPECT_EQ(r.find("cpu_governor", "node")->verdict, Verdict::kPass);
}

TEST(DoctorCpu, DisabledDeepStatesPass) {
  DoctorNode node;  // C1E and C6 disabled
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("cpu_cstates", "node")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("cpu_cstates", "node"), "deep_states"), "none enabled");
}

TEST(DoctorCpu, NoCpufreqIsUnknown) {
  DoctorNode node;
  for (int c = 0; c < 4; ++c) {
    node.tree().remove("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq");
  }
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("cpu_governor", "node")->verdict, Verdict::kUnknown);
  EXPECT_EQ(ev(r.find("cpu_governor", "node"), "governors"), "no cpufreq");
}

TEST(DoctorCpu, NoCpuidleDriverMeansHaltOnly) {
  DoctorNode node;
  node.writeCpus(2, {"performance"}, false);
  for (int c = 0; c < 2; ++c) {
    node.tree().remove("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpuidle");
  }
  node.tree().writeAttr("/sys/devices/system/cpu/cpuidle/current_driver", "none");
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("cpu_cstates", "node")->verdict, Verdict::kPass);
  EXPECT_EQ(ev(r.find("cpu_cstates", "node"), "cpuidle_driver"), "none");
}

}  // namespace
}  // namespace rdmanet::doctor
