// The pre-flight's table and JSON (deviceplugin/doctor/preflight/render.h).
#include "deviceplugin/doctor/preflight/render.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;

PreflightReport report() {
  PreflightReport r{.run_id = "ab12"};
  r.nodes.push_back({.node = "vm1",
                     .daemon_pod = "rdmanet/node-1",
                     .reached = true,
                     .checks = {{"mtu", "eth1", Verdict::kPass}},
                     .counters = {{"rxe0/1", {{"out_of_sequence", 7}}}}});
  r.nodes.push_back({.node = "vm2", .reason = "no running rdmanet daemon pod"});
  ProbeSummary s;
  s.pass = true;
  s.traffic_class = 104;
  s.rtt_p50_us = 20;
  s.rtt_p99_us = 45;
  s.gbps = 8;
  s.port_gbps = 10;
  s.path_mtu = 1500;
  s.roce_mtu = 1024;
  s.device = "mlx5_3";
  PairResult a{.pair = {"vm1", "vm2"}, .summary = s, .seconds = 12.345};
  judgePair(a, {}, {}, {});
  PairResult b{.pair = {"vm2", "vm1"}, .failure = "the probe server pod p on vm1 ended: Failed"};
  judgePair(b, {}, {}, {});
  r.pairs = {a, b};
  r.baseline = BaselineRecord{
      .configmap = "rdmanet/rdmanet-preflight-baseline", .taken_at = 1796000000, .nodes = {"vm1"}};
  r.verdict = overallVerdict(r.nodes, r.pairs);
  return r;
}

TEST(PreflightRenderTest, TheTableHasNodesPairsProblemsAndTheBaseline) {
  const std::string t = renderPreflightTable(report());
  const std::string want =
      "rdmanet pre-flight, run ab12: 2 nodes, 2 pairs\n"
      "\n"
      "NODE                             CHECKLIST FAILING CHECKS\n"
      "vm1                              PASS\n"
      "vm2                              UNKNOWN   no running rdmanet daemon pod\n"
      "\n"
      "PAIR                                              BW Gb/s % PORT  RTT p50/p99 us SPREAD  "
      "PATH/RoCE MTU   TC VERDICT\n"
      "vm1 -> vm2                                           8.00    80%       20.0/45.0    2.2  "
      "    1500/1024  104 FAIL\n"
      "vm2 -> vm1                                              -      -               -      -  "
      "            -    - FAIL\n"
      "\n"
      "PROBLEMS\n"
      "UNKNOWN node vm2 [checklist]: no running rdmanet daemon pod\n"
      "        cause: the node's checklist and counters could not be read: check rdmanet's daemon "
      "pod on the node (kubectl get pods -o wide) and its /metrics\n"
      "FAIL    vm1 -> vm2 [bandwidth]: 8.00 Gb/s is 80% of the 10 Gb/s port, below 90%\n";
  EXPECT_EQ(t.substr(0, want.size()), want) << t;
  EXPECT_NE(t.find("FAIL    vm2 -> vm1 [probe]: the probe server pod p on vm1 ended: Failed\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("Baseline: RDMA counters of vm1 recorded in ConfigMap "
                   "rdmanet/rdmanet-preflight-baseline at 2026-11-30T00:53:20Z (one key per "
                   "node)\nVerdict: FAIL\n"),
            std::string::npos)
      << t;
}

TEST(PreflightRenderTest, TheJsonHasOneObjectWithEveryPart) {
  const json j = json::parse(renderPreflightJson(report()));
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["run"], "ab12");
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["nodes"][0], json::parse(R"({"node":"vm1","checklist":"PASS","failing_checks":[],
      "daemon_pod":"rdmanet/node-1","reason":"",
      "checks":[{"check":"mtu","device":"eth1","verdict":"PASS"}],
      "counters":{"rxe0/1":{"out_of_sequence":7}}})"));
  EXPECT_EQ(j["nodes"][1]["checklist"], "UNKNOWN");
  const json& a = j["pairs"][0];
  EXPECT_EQ(a["from"], "vm1");
  EXPECT_EQ(a["to"], "vm2");
  EXPECT_EQ(a["verdict"], "FAIL");
  EXPECT_EQ(a["seconds"], 12.3);
  EXPECT_EQ(a["device"], "mlx5_3");
  EXPECT_EQ(a["gbps"], 8.0);
  EXPECT_EQ(a["bw_percent"], 80.0);
  EXPECT_EQ(a["rtt_spread"], 2.25);
  EXPECT_EQ(a["path_mtu"], 1500);
  EXPECT_EQ(a["roce_mtu"], 1024);
  EXPECT_EQ(a["traffic_class"], 104);
  EXPECT_EQ(a["dscp"], 26);
  EXPECT_FALSE(a.contains("local_mtu"));  // not measured
  EXPECT_EQ(j["pairs"][1]["failure"], "the probe server pod p on vm1 ended: Failed");
  EXPECT_FALSE(j["pairs"][1].contains("gbps"));
  ASSERT_EQ(j["problems"].size(), 3u);
  EXPECT_EQ(j["problems"][1]["subject"], "vm1 -> vm2");
  EXPECT_EQ(j["problems"][1]["check"], "bandwidth");
  EXPECT_EQ(j["baseline"], json::parse(R"({"configmap":"rdmanet/rdmanet-preflight-baseline",
      "taken_at":"2026-11-30T00:53:20Z","nodes":["vm1"],"error":""})"));
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
