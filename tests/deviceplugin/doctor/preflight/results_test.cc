// The probe's summary and the daemon's /metrics as the pre-flight reads them
// (deviceplugin/doctor/preflight/summary.h, node_health.h).
#include <gtest/gtest.h>

#include "deviceplugin/doctor/preflight/node_health.h"
#include "deviceplugin/doctor/preflight/summary.h"

namespace rdmanet::doctor::preflight {
namespace {

TEST(SummaryTest, EveryFieldIsReadAndUnknownKeysAreIgnored) {
  auto s = parseProbeSummary(R"({"v":1,"pass":true,"problems":["x"],"failed_stage":"",
      "error":"","device":"rxe1","gid_index":1,"traffic_class":104,"sl":3,"rtt_p50_us":12.5,
      "rtt_p99_us":30,"rtt_max_us":44.25,"rtts":200,"count":200,"gbps":9.4,"port_gbps":10,
      "local_mtu":1500,"peer_mtu":1500,"path_mtu":1500,"roce_mtu":1024,
      "counters_delta":{"out_of_sequence":3,"rcvd_pkts":100},"new_key":{"a":1}})");
  ASSERT_TRUE(s.ok()) << s.error().msg;
  EXPECT_TRUE(s->pass);
  EXPECT_EQ(s->problems, std::vector<std::string>{"x"});
  EXPECT_EQ(s->device, "rxe1");
  EXPECT_EQ(s->gid_index, 1);
  EXPECT_EQ(s->traffic_class, 104);
  EXPECT_EQ(s->sl, 3);
  EXPECT_EQ(s->rtt_p50_us, 12.5);
  EXPECT_EQ(s->rtt_p99_us, 30.0);
  EXPECT_EQ(s->rtt_max_us, 44.25);
  EXPECT_EQ(s->rtts, 200);
  EXPECT_EQ(s->count, 200);
  EXPECT_EQ(s->gbps, 9.4);
  EXPECT_EQ(s->port_gbps, 10.0);
  EXPECT_EQ(s->local_mtu, 1500);
  EXPECT_EQ(s->peer_mtu, 1500);
  EXPECT_EQ(s->path_mtu, 1500);
  EXPECT_EQ(s->roce_mtu, 1024);
  EXPECT_EQ(s->counters_delta,
            (std::map<std::string, uint64_t>{{"out_of_sequence", 3}, {"rcvd_pkts", 100}}));
}

TEST(SummaryTest, MissingFieldsWereNotMeasured) {
  auto s = parseProbeSummary(R"({"v":1,"pass":false,"failed_stage":"connect","error":"REJECTED"})");
  ASSERT_TRUE(s.ok()) << s.error().msg;
  EXPECT_EQ(s->failed_stage, "connect");
  EXPECT_EQ(s->error, "REJECTED");
  EXPECT_FALSE(s->gbps.has_value());
  EXPECT_FALSE(s->path_mtu.has_value());
}

TEST(SummaryTest, BadSummariesAreErrorsNamingTheKey) {
  EXPECT_EQ(parseProbeSummary("").error().msg, "the probe's summary is not JSON");
  EXPECT_EQ(parseProbeSummary("probe: connect failed").error().code, ErrorCode::kDecodeFailure);
  EXPECT_EQ(parseProbeSummary("[1]").error().msg, "\"summary\" must be an object");
  EXPECT_EQ(parseProbeSummary(R"({"rtt_p99_us":"slow"})").error().msg,
            "\"rtt_p99_us\" must be a number");
  EXPECT_EQ(parseProbeSummary(R"({"path_mtu":1500.5})").error().msg,
            "\"path_mtu\" must be an integer");
  EXPECT_EQ(parseProbeSummary(R"({"counters_delta":{"x":-1}})").error().msg,
            "\"counters_delta.x\" is -1, out of range 0..9223372036854775807");
}

// As deviceplugin/doctor/render_prometheus.cc writes them, escapes included.
constexpr const char* kMetrics =
    "# HELP rdmanet_doctor_check Node doctor check result: 0 pass, 1 warn, 2 fail, 3 unknown.\n"
    "# TYPE rdmanet_doctor_check gauge\n"
    "rdmanet_doctor_check{check=\"mtu\",device=\"eth1\"} 0\n"
    "rdmanet_doctor_check{check=\"lossless\",device=\"mlx5_0\"} 2\n"
    "rdmanet_doctor_check{check=\"pause\",device=\"\"} 1\n"
    "rdmanet_doctor_check{check=\"q\\\"x\",device=\"a\\\\b\"} 3\n"
    "# TYPE rdmanet_doctor_rdma_counter counter\n"
    "rdmanet_doctor_rdma_counter{port=\"mlx5_0/1\",counter=\"out_of_sequence\",class="
    "\"retransmit\"} 12\n"
    "rdmanet_doctor_rdma_counter{port=\"mlx5_0/1\",counter=\"np_cnp_sent\",class=\"congestion\"} "
    "18446744073709551615\n"
    "rdmanet_dp_devices{resource=\"rdma/vf\"} 4\n";

TEST(NodeHealthTest, ChecksAndCountersAreReadFromTheDaemonsMetrics) {
  NodeHealth h{.node = "vm1", .reached = true};
  ASSERT_TRUE(parseDoctorMetrics(kMetrics, h).ok());
  ASSERT_EQ(h.checks.size(), 4u);
  EXPECT_EQ(h.checks[1].check, "lossless");
  EXPECT_EQ(h.checks[1].device, "mlx5_0");
  EXPECT_EQ(h.checks[1].verdict, Verdict::kFail);
  EXPECT_EQ(h.checks[3].check, "q\"x");
  EXPECT_EQ(h.checks[3].device, "a\\b");
  EXPECT_EQ(h.counters["mlx5_0/1"]["out_of_sequence"], 12u);
  EXPECT_EQ(h.counters["mlx5_0/1"]["np_cnp_sent"], 18446744073709551615u);
  EXPECT_EQ(h.checklist(), Verdict::kFail);
  EXPECT_EQ(h.failingChecks(), (std::vector<std::string>{"lossless (mlx5_0)", "pause"}));
}

TEST(NodeHealthTest, AnUnreachedNodeIsUnknownAndABadSampleIsAnError) {
  NodeHealth h{.node = "vm1"};
  EXPECT_EQ(h.checklist(), Verdict::kUnknown);
  NodeHealth bad{.node = "vm1"};
  const auto st = parseDoctorMetrics("x 1\nrdmanet_doctor_check{check=\"mtu\"} 7\n", bad);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().msg,
            "metrics line 2 \"rdmanet_doctor_check{check=\"mtu\"} 7\": the value is not a verdict "
            "(0 to 3)");
  EXPECT_FALSE(parseDoctorMetrics("rdmanet_doctor_check{check=\"mtu 0\n", bad).ok());
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
