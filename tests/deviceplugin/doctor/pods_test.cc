// `rdmanet-doctor pods`: verdicts from two readings of the pod map, worst first (pods.h).
#include "deviceplugin/doctor/pods.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/simnode/temp_dir.h"

namespace rdmanet::doctor {
namespace {

using podnet::DeviceReading;
using podnet::PodSnapshot;
using podnet::PortReading;

// One sriov attachment of pod ml/<pod> on `rdma`, behind port ens1f0, at priority 3.
DeviceReading device(const std::string& pod, const std::string& rdma,
                     std::map<std::string, uint64_t> counters, const std::string& mode = "sriov") {
  DeviceReading r;
  r.dev.att = podnet::PodAttachment{.container_id = "c-" + pod,
                                    .ifname = "net1",
                                    .pod_namespace = "ml",
                                    .pod_name = pod,
                                    .mode = mode,
                                    .priority = 3};
  r.dev.rdma_device = rdma;
  r.dev.port_netdev = "ens1f0";
  r.ports[1] = std::move(counters);
  return r;
}

PortReading port(uint64_t prio3_pause, uint64_t carrier_down = 0) {
  return PortReading{.netdev = "ens1f0",
                     .pfc = {{.priority = 3, .direction = "rx", .frames = prio3_pause}},
                     .carrier_down = carrier_down};
}

TEST(DoctorPodsTest, LossWithoutPauseIsLossOnThePathAndComesFirst) {
  PodSnapshot before{.devices = {device("idle", "mlx5_2", {{"out_of_sequence", 0}}),
                                 device("trainer-3", "mlx5_3", {{"out_of_sequence", 1000}})},
                     .ports = {port(50)}};
  PodSnapshot after{.devices = {device("idle", "mlx5_2", {{"out_of_sequence", 0}}),
                                device("trainer-3", "mlx5_3", {{"out_of_sequence", 13000}})},
                    .ports = {port(50)}};
  const auto v = judgePods(before, after, 10);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].pod, "ml/trainer-3");
  EXPECT_EQ(v[0].verdict, Verdict::kFail);
  EXPECT_EQ(v[0].summary,
            "pod ml/trainer-3: 1.2 k out-of-sequence/s on mlx5_3 while its port shows 0 pause "
            "frames: suspect loss on the path, not congestion");
  EXPECT_EQ(v[1].pod, "ml/idle");
  EXPECT_EQ(v[1].verdict, Verdict::kPass);
}

TEST(DoctorPodsTest, LossWhileThePortPausesIsCongestionWithLoss) {
  PodSnapshot before{.devices = {device("a", "mlx5_3", {{"local_ack_timeout_err", 0}})},
                     .ports = {port(0)}};
  PodSnapshot after{.devices = {device("a", "mlx5_3", {{"local_ack_timeout_err", 50}})},
                    .ports = {port(5000)}};
  const auto v = judgePods(before, after, 5);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::kWarn);
  EXPECT_EQ(v[0].summary,
            "pod ml/a: 10 retransmits/s on mlx5_3 while its port pauses 1.0 k frames/s on "
            "priority 3: congestion with loss");
}

TEST(DoctorPodsTest, CnpsAloneAreCongestionControlAtWork) {
  PodSnapshot before{.devices = {device("a", "mlx5_3", {{"np_cnp_sent", 0}})}, .ports = {port(0)}};
  PodSnapshot after{.devices = {device("a", "mlx5_3", {{"np_cnp_sent", 300}})}, .ports = {port(0)}};
  const auto v = judgePods(before, after, 10);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::kPass);
  EXPECT_EQ(v[0].summary,
            "pod ml/a: no loss; 30 CNPs/s on mlx5_3: congestion control (DCQCN) at work");
}

TEST(DoctorPodsTest, AFlappingPortFailsItsPods) {
  PodSnapshot before{.devices = {device("a", "mlx5_3", {})}, .ports = {port(0, 1)}};
  PodSnapshot after{.devices = {device("a", "mlx5_3", {})}, .ports = {port(0, 3)}};
  const auto v = judgePods(before, after, 10);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::kFail);
  EXPECT_EQ(v[0].summary, "pod ml/a: its port ens1f0 lost carrier 2 time(s)");
}

TEST(DoctorPodsTest, AMacvlanPodsVerdictSaysTheCountersAreThePorts) {
  PodSnapshot before{.devices = {device("m", "mlx5_0", {{"out_of_sequence", 0}}, "macvlan")},
                     .ports = {port(0)}};
  PodSnapshot after{.devices = {device("m", "mlx5_0", {{"out_of_sequence", 20}}, "macvlan")},
                    .ports = {port(0)}};
  const auto v = judgePods(before, after, 10);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].summary.find("(counters of the shared port, not this pod's alone)"),
            std::string::npos);
}

TEST(DoctorPodsTest, NoCountersIsUnknownAndACounterResetIsNoGrowth) {
  DeviceReading none = device("n", "", {});
  none.ports.clear();
  PodSnapshot before{.devices = {none, device("r", "mlx5_3", {{"out_of_sequence", 900}})},
                     .ports = {port(0)}};
  PodSnapshot after{.devices = {none, device("r", "mlx5_3", {{"out_of_sequence", 3}})},
                    .ports = {port(0)}};
  const auto v = judgePods(before, after, 10);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].pod, "ml/n");
  EXPECT_EQ(v[0].verdict, Verdict::kUnknown);
  EXPECT_EQ(v[1].verdict, Verdict::kPass);
}

// `d` with its interface's counters: `bytes` each way.
DeviceReading withNetdev(DeviceReading d, uint64_t bytes) {
  d.netdev = podnet::NetdevTraffic{
      .rx_bytes = bytes, .tx_bytes = bytes, .rx_packets = bytes / 1500, .tx_packets = bytes / 1500};
  return d;
}

TEST(DoctorPodsTest, TrafficOverTheInterfaceWithNoRdmaBytesIsTheFallbackToTcp) {
  // rank-1 moves 2 x 1.05 GB through eth1 in 10 s while its RDMA port counts nothing; rank-0
  // does the same through RDMA.
  auto pod = [](const std::string& name, uint64_t words, uint64_t if_bytes) {
    auto d = withNetdev(device(name, "mlx5_" + name.substr(5),
                               {{"port_xmit_data", words}, {"port_rcv_data", words}}),
                        if_bytes);
    d.dev.att.ifname = "eth1";
    d.dev.att.pod_namespace = "team";
    return d;
  };
  PodSnapshot before{.devices = {pod("rank-0", 1000, 5000), pod("rank-1", 1000, 5000)},
                     .ports = {port(0)}};
  PodSnapshot after{
      .devices = {pod("rank-0", 250001000, 5000 + 4000), pod("rank-1", 1000, 5000 + 1050000000)},
      .ports = {port(0)}};
  const auto v = judgePods(before, after, 10);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].pod, "team/rank-1");
  EXPECT_EQ(v[0].verdict, Verdict::kFail);
  EXPECT_EQ(v[0].summary,
            "pod team/rank-1: moved 2.1 GB over eth1 and 0 B over RDMA (mlx5_1) in the last 10 s: "
            "the workload fell back to TCP");
  EXPECT_NE(v[0].remedy.find("NCCL_IB_DISABLE"), std::string::npos);
  EXPECT_NE(v[0].remedy.find("UCX_TLS"), std::string::npos);
  EXPECT_NE(v[0].remedy.find("/dev/infiniband"), std::string::npos);
  EXPECT_DOUBLE_EQ(v[0].netdev_bytes_per_s, 210e6);
  EXPECT_DOUBLE_EQ(v[0].rdma_bytes_per_s, 0);
  EXPECT_EQ(v[1].pod, "team/rank-0");
  EXPECT_EQ(v[1].verdict, Verdict::kPass);
  EXPECT_DOUBLE_EQ(v[1].rdma_bytes_per_s, 2 * 4 * 250000000.0 / 10);
}

TEST(DoctorPodsTest, AnIdlePodsTrickleOverItsInterfaceIsNoFallback) {
  // 400 kB/s each way (ARP, keepalives, a launcher's bootstrap): below 1 MB/s.
  PodSnapshot before{.devices = {withNetdev(device("idle", "mlx5_2", {{"port_xmit_data", 7}}), 0)},
                     .ports = {port(0)}};
  PodSnapshot after{
      .devices = {withNetdev(device("idle", "mlx5_2", {{"port_xmit_data", 7}}), 2000000)},
      .ports = {port(0)}};
  const auto v = judgePods(before, after, 5);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::kPass);
  EXPECT_DOUBLE_EQ(v[0].netdev_bytes_per_s, 800000);
}

TEST(DoctorPodsTest, SoftRocePacketsCountAsRdmaTraffic) {
  // rxe counts packets, not bytes, and its UDP is in the interface's counters too.
  PodSnapshot before{.devices = {withNetdev(device("r", "rxe0", {{"sent_pkts", 0}}), 0)},
                     .ports = {port(0)}};
  PodSnapshot moving{.devices = {withNetdev(device("r", "rxe0", {{"sent_pkts", 9000}}), 50000000)},
                     .ports = {port(0)}};
  PodSnapshot still{.devices = {withNetdev(device("r", "rxe0", {{"sent_pkts", 0}}), 50000000)},
                    .ports = {port(0)}};
  EXPECT_EQ(judgePods(before, moving, 5).at(0).verdict, Verdict::kPass);
  EXPECT_EQ(judgePods(before, still, 5).at(0).verdict, Verdict::kFail);
}

TEST(DoctorPodsTest, NoFallbackIsClaimedWithoutTheCountersToTellIt) {
  // A driver with no traffic counters, and a pod whose interface could not be read.
  PodSnapshot before{.devices = {withNetdev(device("a", "mlx5_3", {{"out_of_sequence", 0}}), 0),
                                 device("b", "mlx5_4", {{"port_xmit_data", 0}})},
                     .ports = {port(0)}};
  PodSnapshot after{
      .devices = {withNetdev(device("a", "mlx5_3", {{"out_of_sequence", 0}}), 90000000),
                  device("b", "mlx5_4", {{"port_xmit_data", 0}})},
      .ports = {port(0)}};
  const auto v = judgePods(before, after, 5);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].verdict, Verdict::kPass);
  EXPECT_EQ(v[1].verdict, Verdict::kPass);
}

TEST(DoctorPodsTest, WithoutTheInterfacesCountersTheVfsAsItsPfCountsThemStandIn) {
  // The chart's daemon cannot enter pods' namespaces; the PF's per-VF counters are unprivileged.
  auto vf = [](uint64_t bytes) {
    auto d = device("v", "mlx5_7", {{"port_xmit_data", 5}});
    d.vf = VfTraffic{.rx_bytes = bytes, .tx_bytes = bytes};
    return d;
  };
  const auto v = judgePods(PodSnapshot{.devices = {vf(0)}, .ports = {port(0)}},
                           PodSnapshot{.devices = {vf(25000000)}, .ports = {port(0)}}, 10);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::kFail);
  EXPECT_DOUBLE_EQ(v[0].netdev_bytes_per_s, 5e6);
  EXPECT_EQ(v[0].summary,
            "pod ml/v: moved 50.0 MB over net1 and 0 B over RDMA (mlx5_7) in the last 10 s: the "
            "workload fell back to TCP");
}

TEST(DoctorPodsTest, HumanBytes) {
  EXPECT_EQ(humanBytes(0), "0 B");
  EXPECT_EQ(humanBytes(850), "850 B");
  EXPECT_EQ(humanBytes(2.1e9), "2.1 GB");
}

TEST(DoctorPodsTest, HumanRates) {
  EXPECT_EQ(humanRate(0), "0");
  EXPECT_EQ(humanRate(0.5), "0.5");
  EXPECT_EQ(humanRate(850), "850");
  EXPECT_EQ(humanRate(1234), "1.2 k");
  EXPECT_EQ(humanRate(3.4e6), "3.4 M");
}

TEST(DoctorPodsTest, TheCommandReadsTwiceAnIntervalApartAndFailsOnAFail) {
  sim::TempDir state{"rdmanet-pods-cli"};
  int reads = 0;
  int waited = 0;
  PodsCliDeps deps{.read =
                       [&](const std::string& dir, const std::string& root) {
                         EXPECT_EQ(dir, state.path().string());
                         EXPECT_EQ(root, "/");
                         const uint64_t oos = reads++ == 0 ? 0 : 600;
                         return PodSnapshot{
                             .devices = {device("t", "mlx5_3", {{"out_of_sequence", oos}})},
                             .ports = {port(0)}};
                       },
                   .wait = [&](int s) { waited += s; }};
  std::ostringstream out, err;
  const int rc =
      runPodsCli({"--interval", "3", "--cni-state-dir", state.path().string()}, deps, out, err);
  EXPECT_EQ(rc, 1) << err.str();
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(waited, 3);
  EXPECT_NE(out.str().find("FAIL     pod ml/t: 200 out-of-sequence/s on mlx5_3"), std::string::npos)
      << out.str();
}

TEST(DoctorPodsTest, JsonCarriesTheVerdictsInTheTablesOrder) {
  sim::TempDir state{"rdmanet-pods-cli"};
  int reads = 0;
  PodsCliDeps deps{.read =
                       [&](const std::string&, const std::string&) {
                         const uint64_t oos = reads++ == 0 ? 0 : 50;
                         return PodSnapshot{
                             .devices = {device("idle", "mlx5_2", {}),
                                         device("t", "mlx5_3", {{"out_of_sequence", oos}})},
                             .ports = {port(0)}};
                       },
                   .wait = [](int) {}};
  std::ostringstream out, err;
  ASSERT_EQ(runPodsCli({"--json", "--interval", "5", "--cni-state-dir", state.path().string()},
                       deps, out, err),
            1);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["interval_s"], 5);
  ASSERT_EQ(j["pods"].size(), 2u);
  EXPECT_EQ(j["pods"][0]["pod"], "ml/t");
  EXPECT_EQ(j["pods"][0]["verdict"], "FAIL");
  EXPECT_EQ(j["pods"][0]["loss_per_s"], 10.0);
  EXPECT_EQ(j["pods"][0]["rates"]["out_of_sequence"], "10/s");
  EXPECT_EQ(j["pods"][0]["netdev_bytes_per_s"], 0.0);
  EXPECT_EQ(j["pods"][0]["rdma_bytes_per_s"], 0.0);
  EXPECT_EQ(j["pods"][1]["verdict"], "PASS");
}

TEST(DoctorPodsTest, AMissingStateDirIsAUsageError) {
  PodsCliDeps deps{.read = [](const std::string&, const std::string&) { return PodSnapshot{}; },
                   .wait = [](int) {}};
  std::ostringstream out, err;
  EXPECT_EQ(runPodsCli({"--cni-state-dir", "/nonexistent/rdmanet"}, deps, out, err), 2);
  EXPECT_NE(err.str().find("--cni-state-dir"), std::string::npos);
}

}  // namespace
}  // namespace rdmanet::doctor
