// The probe's pure part: its command line (table-driven), percentiles, the verdict (a failed
// stage, a DSCP that misses the pool's, bandwidth under 90 %), and both renderings. The RDMA
// part runs against Soft-RoCE in the VM (tests/vm/probe_pods.sh).
#include "deviceplugin/doctor/probe/probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rdmanet::doctor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ProbeArgs, ClientAndServerForms) {
  auto c = parseProbeArgs({"10.0.0.2", "--tos", "106", "--count=50", "--bandwidth", "--json",
                           "--device", "mlx5_0", "--bind", "10.0.0.1", "--timeout-ms", "800"});
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->peer, "10.0.0.2");
  EXPECT_EQ(c->effectiveTos(), 106);
  EXPECT_EQ(c->count, 50);
  EXPECT_TRUE(c->bandwidth);
  EXPECT_TRUE(c->json);
  EXPECT_EQ(c->device, "mlx5_0");
  EXPECT_EQ(c->bind, "10.0.0.1");
  EXPECT_EQ(c->timeout_ms, 800);
  auto s = parseProbeArgs({"--listen", "--port", "7000", "--once"});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->listen);
  EXPECT_TRUE(s->once);
  EXPECT_EQ(s->port, 7000);
}

TEST(ProbeArgs, TosDefaultsToThePoolDscp) {
  auto c = parseProbeArgs({"10.0.0.2", "--dscp", "24"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->effectiveTos(), 96);
  EXPECT_EQ(parseProbeArgs({"h"})->effectiveTos(), 104);  // DSCP 26
}

TEST(ProbeArgs, BadInputNamesTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "give the server's address, or --listen"},
      {{"--listen", "10.0.0.2"}, "--listen takes no peer address"},
      {{"a", "--once"}, "--once is for --listen"},
      {{"a", "--tos", "256"}, "--tos: \"256\" is not an integer in [0, 255]"},
      {{"a", "--tos=x"}, "--tos: \"x\" is not an integer in [0, 255]"},
      {{"a", "--dscp", "64"}, "--dscp: \"64\" is not an integer in [0, 63]"},
      {{"a", "--priority", "8"}, "--priority: \"8\" is not an integer in [0, 7]"},
      {{"a", "--count", "0"}, "--count: \"0\" is not an integer in [1, 1000000]"},
      {{"a", "--timeout-ms", "1"}, "--timeout-ms: \"1\" is not an integer in [10, 600000]"},
      {{"a", "--port", "0"}, "--port: \"0\" is not an integer in [1, 65535]"},
      {{"a", "--port"}, "--port: needs a value"},
      {{"a", "--bind", ""}, "--bind: empty value"},
      {{"a", "--json=maybe"}, "--json: \"maybe\" is not a valid value"},
      {{"a", "b"}, "b: unexpected argument"},
      {{"a", "--frob"}, "--frob: unknown flag"},
      {{"a", "--frob=1"}, "--frob: unknown flag"},
      {{"a", "--device", ""}, "--device: empty value"},
      {{"a", "--device", std::string(64, 'd')}, "--device: longer than 63 characters"},
  };
  for (const auto& [args, mentions] : cases) {
    auto o = parseProbeArgs(args);
    ASSERT_FALSE(o.ok()) << mentions;
    EXPECT_EQ(o.error().code, ErrorCode::kInvalidConfig);
    EXPECT_THAT(o.error().msg, HasSubstr(mentions));
  }
}

TEST(ProbeArgs, FlagsTakeBothFormsAndTheAddressGoesAnywhere) {
  auto c = parseProbeArgs({"--bind=10.0.0.1", "--port=7000", "10.0.0.2", "--json=false",
                           "--priority", "5", "--dscp=24"});
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->peer, "10.0.0.2");
  EXPECT_EQ(c->bind, "10.0.0.1");
  EXPECT_EQ(c->port, 7000);
  EXPECT_FALSE(c->json);
  EXPECT_EQ(c->priority, 5);
  EXPECT_EQ(c->dscp, 24);
  EXPECT_FALSE(c->tos.has_value());
  // The defaults the VM test and the README rely on.
  auto d = parseProbeArgs({"h"});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, 18515);
  EXPECT_EQ(d->dscp, 26);
  EXPECT_EQ(d->priority, 3);
  EXPECT_EQ(d->count, 1000);
  EXPECT_EQ(d->timeout_ms, 5000);
  EXPECT_FALSE(d->bandwidth || d->json || d->listen || d->once);
}

TEST(ProbeArgs, HelpIsGeneratedAndVersionExists) {
  const std::string help = probeUsage();
  EXPECT_THAT(help, HasSubstr("usage: rdmanet-doctor probe"));
  EXPECT_THAT(help, HasSubstr("rdmanet-doctor probe --listen"));
  for (const char* flag :
       {"--listen", "--once", "--bind", "--port", "--device", "--tos", "--dscp", "--priority",
        "--count", "--bandwidth", "--timeout-ms", "--json", "--help", "--version"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
  auto h = parseProbeArgs({"--help"});  // no address needed
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->help);
  auto v = parseProbeArgs({"--version"});
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->version);
  EXPECT_FALSE(parseProbeArgs({"a"})->version);
}

TEST(ProbePercentile, NearestRank) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(percentile(v, 50), 50);
  EXPECT_EQ(percentile(v, 99), 99);
  EXPECT_EQ(percentile({7}, 99), 7);
  EXPECT_EQ(percentile({}, 50), 0);
}

ProbeReport good() {
  ProbeReport r{.peer = "10.0.0.2",
                .device = "rxe0",
                .port_num = 1,
                .gid_index = 1,
                .gid = "::ffff:10.0.0.1",
                .traffic_class = 104,
                .sl = 0,
                .expected_dscp = 26,
                .expected_priority = 3,
                .requested_tos = 104,
                .rtt_us = {10, 12, 11},
                .count = 3};
  return r;
}

TEST(ProbeVerdict, MatchingDscpAndAllRepliesPass) {
  ProbeReport r = good();
  judgeProbe(r);
  EXPECT_TRUE(r.pass);
  EXPECT_THAT(r.problems, IsEmpty());
}

TEST(ProbeVerdict, WrongTosIsAMismatch) {
  ProbeReport r = good();
  r.traffic_class = 0;
  judgeProbe(r);
  EXPECT_FALSE(r.pass);
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr("traffic class 0 carries DSCP 0, not the pool's "
                                                "DSCP 26")));
  const auto j = nlohmann::json::parse(renderProbeJson(r));
  EXPECT_EQ(j["dscp_match"], false);
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_THAT(renderProbeTable(r), HasSubstr("MISMATCH"));
}

TEST(ProbeVerdict, AFailedStageFailsWithItsEvidence) {
  ProbeReport r = good();
  r.rtt_us.clear();
  r.traffic_class = -1;
  r.failed_stage = "connect";
  r.error = "expected RDMA_CM_EVENT_ESTABLISHED, got RDMA_CM_EVENT_UNREACHABLE (status -110)";
  judgeProbe(r);
  EXPECT_FALSE(r.pass);
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr("connect failed: expected")));
  const auto j = nlohmann::json::parse(renderProbeJson(r));
  EXPECT_EQ(j["failed"]["stage"], "connect");
}

TEST(ProbeVerdict, MissingRepliesFail) {
  ProbeReport r = good();
  r.count = 5;
  judgeProbe(r);
  EXPECT_THAT(r.problems, ElementsAre("only 3 of 5 ping-pongs completed"));
}

TEST(ProbeVerdict, BandwidthBelowNinetyPercentOfThePortFails) {
  ProbeReport r = good();
  r.bandwidth_run = true;
  r.port_gbps = 100;
  r.gbps = 89.9;
  judgeProbe(r);
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr("below 90% of the port's 100 Gbit/s")));
  r.gbps = 90.0;
  judgeProbe(r);
  EXPECT_TRUE(r.pass);
  const auto j = nlohmann::json::parse(renderProbeJson(r));
  EXPECT_DOUBLE_EQ(j["bandwidth"]["ratio"].get<double>(), 0.9);
  EXPECT_THAT(renderProbeTable(r), HasSubstr("90.0%, need 90%"));
}

TEST(ProbeVerdict, SlOtherThanThePriorityIsNotedNotFailed) {
  ProbeReport r = good();
  judgeProbe(r);
  const auto j = nlohmann::json::parse(renderProbeJson(r));
  EXPECT_EQ(j["sl_match"], false);
  EXPECT_EQ(j["verdict"], "PASS");
  EXPECT_EQ(j["rtt_us"]["p50"], 11);
  EXPECT_THAT(renderProbeTable(r), HasSubstr("the wire priority comes from the VLAN QoS"));
}

}  // namespace
}  // namespace rdmanet::doctor
