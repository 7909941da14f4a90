// RDMA counters: totals without a baseline, growth against one, and the baseline file.
#include "deviceplugin/doctor/counters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/os/atomic_file.h"
#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::doctor {
namespace {

using namespace testing::prelude;

const std::string kHw = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/";
const std::string kIb = "/sys/class/infiniband/mlx5_0/ports/1/counters/";

TEST(DoctorCounters, SnapshotHoldsBothDirectoriesOfEveryDataPort) {
  DoctorNode node;
  node.tree().writeAttr(kHw + "out_of_sequence", "7");
  node.tree().writeAttr(kIb + "symbol_error", "2");
  const DoctorReport r = node.run({}, nullptr, true, 1234);
  EXPECT_EQ(r.counters.taken_at, 1234);
  std::vector<std::string> ports;
  for (const auto& [p, _] : r.counters.ports) ports.push_back(p);
  EXPECT_THAT(ports, ElementsAre("mlx5_0/1", "mlx5_1/1", "mlx5_6/1", "mlx5_7/1"));
  EXPECT_EQ(r.counters.ports.at("mlx5_0/1").at("out_of_sequence"), 7u);
  EXPECT_EQ(r.counters.ports.at("mlx5_0/1").at("symbol_error"), 2u);
  EXPECT_EQ(r.counters.ports.at("mlx5_0/1").at("port_xmit_data"), 0u);
}

TEST(DoctorCounters, WithoutBaselineNonZeroErrorTotalsWarn) {
  DoctorNode node;
  node.tree().writeAttr(kIb + "symbol_error", "2");
  node.tree().writeAttr(kHw + "out_of_sequence", "7");
  const DoctorReport r = node.run();
  const CheckResult* c = r.find("counters", "mlx5_0/1");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kWarn);
  EXPECT_EQ(ev(c, "baseline"), "none");
  EXPECT_EQ(ev(c, "symbol_error"), "2");
  EXPECT_EQ(ev(c, "out_of_sequence"), "7");
  EXPECT_THAT(c->remedy, HasSubstr("--baseline"));
  EXPECT_FALSE(r.has_baseline);
  EXPECT_TRUE(r.deltas.empty());
}

TEST(DoctorCounters, GrowingRetransmitsAreFlaggedAgainstTheBaseline) {
  DoctorNode node;
  node.tree().writeAttr(kHw + "out_of_sequence", "120");
  const DoctorReport first = node.run({}, nullptr, true, 1000);
  EXPECT_THAT(nonPass(first), IsEmpty());  // retransmit totals alone prove nothing
  const CounterSnapshot baseline = first.counters;

  node.tree().writeAttr(kHw + "out_of_sequence", "162");
  node.tree().writeAttr(kHw + "local_ack_timeout_err", "3");
  node.tree().writeAttr(kHw + "np_cnp_sent", "900");
  const DoctorReport r = node.run({}, &baseline, true, 1060);

  const CheckResult* c = r.find("counters", "mlx5_0/1");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kWarn);
  EXPECT_EQ(ev(c, "since"), "60s ago");
  EXPECT_EQ(ev(c, "out_of_sequence"), "+42 (120 -> 162)");
  EXPECT_EQ(ev(c, "local_ack_timeout_err"), "+3 (0 -> 3)");
  EXPECT_EQ(ev(c, "np_cnp_sent"), "+900 (0 -> 900)");  // shown, but congestion is not a fault
  EXPECT_THAT(c->remedy, HasSubstr("PFC"));
  EXPECT_EQ(ev(r.find("counters", "mlx5_1/1"), "grown"), "none");
  EXPECT_THAT(nonPass(r), ElementsAre("counters mlx5_0/1 WARN"));

  ASSERT_TRUE(r.has_baseline);
  EXPECT_EQ(r.baseline_taken_at, 1000);
  auto it = std::find_if(r.deltas.begin(), r.deltas.end(), [](const CounterDelta& d) {
    return d.port == "mlx5_0/1" && d.counter == "out_of_sequence";
  });
  ASSERT_NE(it, r.deltas.end());
  EXPECT_EQ(it->delta(), 42u);
  EXPECT_EQ(it->cls, CounterClass::kRetransmit);
}

TEST(DoctorCounters, GrowingErrorCountersFail) {
  DoctorNode node;
  const CounterSnapshot baseline = node.run().counters;
  node.tree().writeAttr("/sys/class/infiniband/mlx5_7/ports/1/counters/link_downed", "1");
  node.tree().writeAttr("/sys/class/infiniband/mlx5_7/ports/1/counters/symbol_error", "55");
  const DoctorReport r = node.run({}, &baseline);
  const CheckResult* c = r.find("counters", "mlx5_7/1");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_EQ(ev(c, "link_downed"), "+1 (0 -> 1)");
  EXPECT_EQ(ev(c, "symbol_error"), "+55 (0 -> 55)");
  EXPECT_THAT(c->remedy, HasSubstr("cable"));
  EXPECT_EQ(r.exitCode(), 1);
}

TEST(DoctorCounters, ResetCounterIsNotGrowth) {
  DoctorNode node;
  node.tree().writeAttr(kHw + "out_of_sequence", "500");
  const CounterSnapshot baseline = node.run().counters;
  node.tree().writeAttr(kHw + "out_of_sequence", "4");  // driver reloaded
  const DoctorReport r = node.run({}, &baseline);
  const CheckResult* c = r.find("counters", "mlx5_0/1");
  EXPECT_EQ(c->verdict, Verdict::kPass);
  EXPECT_EQ(ev(c, "out_of_sequence"), "reset (500 -> 4)");
}

TEST(DoctorCounters, PortMissingFromBaselineShowsTotals) {
  DoctorNode node;
  CounterSnapshot baseline = node.run().counters;
  baseline.ports.erase("mlx5_6/1");
  const DoctorReport r = node.run({}, &baseline);
  EXPECT_EQ(ev(r.find("counters", "mlx5_6/1"), "baseline"), "port not in baseline");
  EXPECT_EQ(ev(r.find("counters", "mlx5_0/1"), "grown"), "none");
}

TEST(DoctorCounters, NoCounterDirectoriesIsUnknown) {
  DoctorNode node;
  node.tree().remove("/sys/class/infiniband/mlx5_1/ports/1/counters");
  node.tree().remove("/sys/class/infiniband/mlx5_1/ports/1/hw_counters");
  const DoctorReport r = node.run();
  EXPECT_EQ(r.find("counters", "mlx5_1/1")->verdict, Verdict::kUnknown);
  EXPECT_EQ(r.counters.ports.count("mlx5_1/1"), 0u);
}

TEST(DoctorCounters, BaselineFileRoundTripsAtomicallyWith0600) {
  DoctorNode node;
  node.tree().writeAttr(kHw + "rnr_nak_retry_err", "18446744073709551615");  // u64 max
  const CounterSnapshot snap = node.run({}, nullptr, true, 77).counters;
  const std::string file = (node.root() / "baseline.json").string();
  ASSERT_TRUE(saveBaseline(file, snap).ok());
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(atomicTempPath(file)));
  auto back = loadBaseline(file);
  ASSERT_TRUE(back.ok()) << back.error().msg;
  EXPECT_EQ(back->taken_at, 77);
  EXPECT_EQ(back->ports, snap.ports);
  EXPECT_EQ(back->ports.at("mlx5_0/1").at("rnr_nak_retry_err"), 18446744073709551615ull);
}

TEST(DoctorCounters, BadBaselineFilesAreRejectedWithCodes) {
  struct Case {
    const char* text;
    ErrorCode code;
  };
  for (const Case& c :
       {Case{"not json", ErrorCode::kDecodeFailure},
        Case{R"({"version": 1})", ErrorCode::kInvalidConfig},
        Case{R"({"version": 2, "ports": {}})", ErrorCode::kInvalidConfig},
        Case{R"({"version": 1, "ports": {"mlx5_0/1": 3}})", ErrorCode::kInvalidConfig},
        Case{R"({"version": 1, "ports": {"mlx5_0/1": {"x": -1}}})", ErrorCode::kInvalidConfig},
        Case{R"({"version": 1, "taken_at": "x", "ports": {}})", ErrorCode::kInvalidConfig}}) {
    auto r = snapshotFromJson(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().code, c.code) << c.text;
  }
  EXPECT_EQ(loadBaseline("/nonexistent/baseline.json").error().code, ErrorCode::kIoFailure);
}

TEST(DoctorCounters, ClassesFollowTheMlx5Names) {
  EXPECT_EQ(classifyCounter("symbol_error"), CounterClass::kError);
  EXPECT_EQ(classifyCounter("port_rcv_errors"), CounterClass::kError);
  EXPECT_EQ(classifyCounter("roce_adp_retrans"), CounterClass::kRetransmit);
  EXPECT_EQ(classifyCounter("rnr_nak_retry_err"), CounterClass::kRetransmit);
  EXPECT_EQ(classifyCounter("rp_cnp_handled"), CounterClass::kCongestion);
  EXPECT_EQ(classifyCounter("port_xmit_data"), std::nullopt);
}

}  // namespace
}  // namespace rdmanet::doctor
