// The pre-flight's judgement of a pair, a node and the run (deviceplugin/doctor/preflight/judge.h).
#include "deviceplugin/doctor/preflight/judge.h"

#include <gtest/gtest.h>

namespace rdmanet::doctor::preflight {
namespace {

// A clean pair on a 10 Gb/s port with the NAD's 1500.
ProbeSummary clean() {
  ProbeSummary s;
  s.pass = true;
  s.traffic_class = 104;  // DSCP 26
  s.rtt_p50_us = 20;
  s.rtt_p99_us = 40;
  s.rtts = 200;
  s.count = 200;
  s.gbps = 9.5;
  s.port_gbps = 10;
  s.local_mtu = 1500;
  s.peer_mtu = 1500;
  s.path_mtu = 1500;
  s.roce_mtu = 1024;
  s.counters_delta = {{"rcvd_pkts", 4000}, {"sent_pkts", 4000}};
  return s;
}

const MtuExpectation kNad1500{.mtu = 1500, .source = "the NAD rdmanet/rdma-vf's"};

PairResult judged(ProbeSummary s, MtuExpectation from = kNad1500, MtuExpectation to = kNad1500,
                  Expectations e = {}) {
  PairResult r{.pair = {"vm1", "vm2"}, .summary = std::move(s)};
  judgePair(r, e, from, to);
  return r;
}

TEST(JudgeTest, ACleanPairPasses) {
  const auto r = judged(clean());
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_TRUE(r.problems.empty());
}

TEST(JudgeTest, AFailedProbeNamesTheStageAndError) {
  ProbeSummary s;
  s.failed_stage = "connect";
  s.error = "RDMA_CM_EVENT_REJECTED";
  const auto r = judged(s);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(r.problems[0].subject, "vm1 -> vm2");
  EXPECT_EQ(r.problems[0].message, "the probe failed at \"connect\": RDMA_CM_EVENT_REJECTED");
  EXPECT_NE(r.problems[0].cause.find("no RDMA connection from vm1 to vm2"), std::string::npos);
  s.failed_stage = "write";
  EXPECT_NE(judged(s).problems.at(0).cause.find("broke under traffic"), std::string::npos);
}

TEST(JudgeTest, AConnectionBrokenUnderTrafficIsStillJudgedOnWhatItMeasured) {
  auto s = clean();
  s.failed_stage = "write";
  s.error = "write 1 of 100: no completion before the deadline";
  s.gbps = 0;  // the write phase did not finish: no bandwidth verdict
  s.rtt_p50_us = 200000;
  s.path_mtu = 1000;
  s.peer_mtu = 1000;
  const auto r = judged(s, kNad1500, kNad1500, {.rtt_p99_max_us = 1e6, .rtt_p50_max_us = 1e5});
  std::vector<std::string> checks;
  for (const auto& p : r.problems) checks.push_back(p.check);
  EXPECT_EQ(checks, (std::vector<std::string>{"probe", "rtt", "mtu"}));
  s.failed_stage = "connect";  // never connected: nothing else was measured
  EXPECT_EQ(judged(s).problems.size(), 1u);
}

TEST(JudgeTest, APairWithoutASummaryFailsWithItsReason) {
  PairResult r{.pair = {"vm1", "vm2"},
               .failure = "the probe server pod p on vm2 was not running: Pending"};
  judgePair(r, {}, kNad1500, kNad1500);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_EQ(r.problems.at(0).message, "the probe server pod p on vm2 was not running: Pending");
}

TEST(JudgeTest, BandwidthBelowThePercentOfThePortFails) {
  auto s = clean();
  s.gbps = 8.5;
  const auto r = judged(s);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].check, "bandwidth");
  EXPECT_EQ(r.problems[0].message, "8.50 Gb/s is 85% of the 10 Gb/s port, below 90%");
  EXPECT_EQ(judged(s, kNad1500, kNad1500, {.bw_percent = 80}).verdict, Verdict::kPass);
  s.port_gbps = 0;
  const auto unknown = judged(s);
  EXPECT_EQ(unknown.verdict, Verdict::kUnknown);
  EXPECT_EQ(unknown.problems.at(0).message, "8.50 Gb/s, against an unknown port speed");
}

TEST(JudgeTest, HighP99FailsAndSpreadWarns) {
  auto s = clean();
  s.rtt_p50_us = 100;
  s.rtt_p99_us = 2500;
  const auto r = judged(s);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].message, "RTT p99 2500.0 us is above 1000 us");
  EXPECT_EQ(r.problems[1].check, "rtt spread");
  EXPECT_EQ(r.problems[1].verdict, Verdict::kWarn);
  EXPECT_EQ(r.problems[1].message, "RTT p99/p50 is 25.0 (p50 100.0 us, p99 2500.0 us), above 4");
  s.rtt_p99_us = 500;  // spread 5 only
  const auto warn = judged(s);
  EXPECT_EQ(warn.verdict, Verdict::kWarn);
  EXPECT_EQ(warn.problems.size(), 1u);
}

TEST(JudgeTest, AMedianCeilingFailsWhenSetOnly) {
  auto s = clean();
  s.rtt_p50_us = 300;
  s.rtt_p99_us = 900;
  EXPECT_EQ(judged(s).verdict, Verdict::kPass);  // no median ceiling by default
  const auto r = judged(s, kNad1500, kNad1500, {.rtt_p50_max_us = 250});
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].check, "rtt");
  EXPECT_EQ(r.problems[0].message, "RTT p50 300.0 us is above 250 us");
  s.rtt_p99_us = 1500;  // both over: the p99 is named
  EXPECT_EQ(judged(s, kNad1500, kNad1500, {.rtt_p50_max_us = 250}).problems.at(0).message,
            "RTT p99 1500.0 us is above 1000 us");
}

TEST(JudgeTest, LossUpToTheAllowanceIsNoProblem) {
  auto s = clean();
  s.counters_delta["completer_retry_err"] = 7;
  EXPECT_EQ(judged(s).verdict, Verdict::kFail);
  EXPECT_EQ(judged(s, kNad1500, kNad1500, {.loss_max = 7}).verdict, Verdict::kPass);
  s.counters_delta["rcvd_seq_err"] = 1;
  EXPECT_EQ(judged(s, kNad1500, kNad1500, {.loss_max = 7}).problems.at(0).message,
            "8 loss counter events on vm1's port during the run (completer_retry_err +7, "
            "rcvd_seq_err +1)");
}

TEST(JudgeTest, LossCountersThatGrewFailButTrafficAndCongestionDoNot) {
  auto s = clean();
  s.counters_delta["np_cnp_sent"] = 50;
  s.counters_delta["duplicate_request"] = 2;  // the responder's view of a retransmission
  EXPECT_EQ(judged(s).verdict, Verdict::kPass);
  s.counters_delta["out_of_seq_request"] = 3;
  s.counters_delta["local_ack_timeout_err"] = 2;
  const auto r = judged(s);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].check, "loss");
  EXPECT_EQ(r.problems[0].message,
            "5 loss counter events on vm1's port during the run (local_ack_timeout_err +2, "
            "out_of_seq_request +3)");
  EXPECT_NE(r.problems[0].cause.find("PFC on the priority end to end"), std::string::npos);
}

TEST(JudgeTest, AnMtuBelowTheNadsNamesTheNodeAtFault) {
  auto s = clean();
  s.peer_mtu = 1000;
  s.path_mtu = 1000;
  auto r = judged(s);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].message,
            "the largest packet that crosses vm1 -> vm2 is 1000 B, below 1500 B");
  EXPECT_TRUE(r.problems[0].cause.starts_with(
      "node vm2's eth1 MTU 1000 is below the NAD rdmanet/rdma-vf's 1500: set the VF's MTU"))
      << r.problems[0].cause;
  s.peer_mtu = 1500;
  s.local_mtu = 1200;
  s.path_mtu = 1200;
  r = judged(s);
  EXPECT_TRUE(r.problems.at(0).cause.starts_with(
      "node vm1's eth1 MTU 1200 is below the NAD rdmanet/rdma-vf's 1500"));
  s.local_mtu = 1500;
  s.path_mtu = 1400;
  r = judged(s);
  EXPECT_NE(r.problems.at(0).cause.find("both ends' eth1 carry 1500 B but the path between vm1 "
                                        "and vm2 does not"),
            std::string::npos);
}

TEST(JudgeTest, WithoutAnExpectedMtuOnlyAPathBelowBothEndsFails) {
  auto s = clean();
  s.local_mtu = 9000;
  s.peer_mtu = 1500;
  s.path_mtu = 1500;
  EXPECT_EQ(judged(s, {}, {}).verdict, Verdict::kPass);
  s.path_mtu = 1400;
  const auto r = judged(s, {}, {});
  EXPECT_EQ(
      r.problems.at(0).message,
      "the largest packet that crosses vm1 -> vm2 is 1400 B, below the ends' eth1 MTU 1500 B");
  s.path_mtu = 0;  // not measured
  EXPECT_EQ(judged(s).verdict, Verdict::kPass);
}

TEST(JudgeTest, ATrafficClassOfAnotherDscpFails) {
  auto s = clean();
  s.traffic_class = 0;
  const auto r = judged(s);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].message,
            "the connection's traffic class 0 carries DSCP 0, not the pool's 26");
  s.traffic_class = 106;  // DSCP 26 with ECN bits
  EXPECT_EQ(judged(s).verdict, Verdict::kPass);
}

TEST(JudgeTest, MissingRoundTripsFail) {
  auto s = clean();
  s.rtts = 150;
  EXPECT_EQ(judged(s).problems.at(0).message, "only 150 of 200 round trips completed");
}

TEST(JudgeTest, ANodeWhosePairsAloneFailACheckIsNamed) {
  std::vector<PairResult> pairs;
  for (const auto& p : planPairs({"a", "b", "c"}, PairMode::kAll)) {
    auto s = clean();
    if (p.from == "c" || p.to == "c") {
      s.rtt_p50_us = 2000;
      s.rtt_p99_us = 5000;
    }
    if (p.from == "a" && p.to == "b") s.traffic_class = 0;
    pairs.push_back(judged(s));
    pairs.back().pair = p;
  }
  EXPECT_EQ(likelyNodes(pairs),
            (std::vector<std::string>{
                "node c: every pair through it, and only those, has rtt problems (4 pairs)"}));
  pairs.resize(2);  // a -> b (traffic class), a -> c (rtt): one pair each names no node
  EXPECT_TRUE(likelyNodes(pairs).empty());
  EXPECT_TRUE(likelyNodes({judged(clean())}).empty());
}

TEST(JudgeTest, NodesChecklistsAndTheOverallVerdict) {
  NodeHealth ok{.node = "vm1", .reached = true, .checks = {{"mtu", "eth1", Verdict::kPass}}};
  NodeHealth bad{.node = "vm2",
                 .reached = true,
                 .checks = {{"lossless", "rxe0", Verdict::kFail}, {"mtu", "", Verdict::kPass}}};
  NodeHealth gone{.node = "vm3", .reason = "no running rdmanet daemon pod"};
  EXPECT_TRUE(nodeProblems(ok).empty());
  const auto p = nodeProblems(bad);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].subject, "node vm2");
  EXPECT_EQ(p[0].message, "doctor check lossless on rxe0 is FAIL");
  EXPECT_EQ(nodeProblems(gone).at(0).verdict, Verdict::kUnknown);
  PairResult pass{.verdict = Verdict::kPass}, warn{.verdict = Verdict::kWarn};
  EXPECT_EQ(overallVerdict({ok}, {pass}), Verdict::kPass);
  EXPECT_EQ(overallVerdict({ok, gone}, {pass}), Verdict::kUnknown);
  EXPECT_EQ(overallVerdict({ok, gone}, {pass, warn}), Verdict::kWarn);
  EXPECT_EQ(overallVerdict({ok, bad}, {warn}), Verdict::kFail);
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
