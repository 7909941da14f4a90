// What a claim's prepare tells besides kubelet's answer
// (deviceplugin/dra/kubelet/prepare_report.h): its outcome and latency on /metrics, timed on the
// injected clock, and whom a failure's Event is about.
#include "deviceplugin/dra/kubelet/prepare_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "deviceplugin/dra/dra_device.h"
#include "tests/deviceplugin/dra/decoded_claim.h"
#include "tests/deviceplugin/dra/kubelet/in_memory_claims.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kDriver = "rdma.rdmanet.io";
constexpr const char* kPod = "4b7e2c1a-0d3f-4e5a-9b8c-7d6e5f4a3b2c";

using testing::InMemoryClaims;
using testing::oneNicClaim;

class PrepareReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceSnapshot inv{.pools = buildPools(defaultConfig(), node_.inventory())};
    inv.devices = nodeDevices(inv.pools);
    state_.publish(std::move(inv), stampVersion);
    ASSERT_TRUE(preparer_.start().ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  testing::TestNode node_;
  const fs::path dir_ = testing::makeTempDir("dra-prepare-report");
  rdmanet::testing::FakeClock clock_;
  InMemoryClaims claims_{clock_};
  DeviceState state_;
  ClaimPreparer preparer_{{.driver = kDriver,
                           .node = "node-a",
                           .cdi_dir = dir_ / "cdi",
                           .checkpoint = dir_ / "checkpoint.json",
                           .clock = &clock_},
                          claims_,
                          state_};
  Metrics metrics_;
  ReportedPreparer reported_{preparer_, kDriver, {.clock = &clock_, .metrics = &metrics_}};
};

TEST_F(PrepareReportTest, EachClaimsOutcomeAndLatencyOnTheClockAreOnMetrics) {
  const std::string dev = dra::pciDeviceName(node_.vf(0, 1));
  claims_.claims["fast"] = oneNicClaim("fast", "uid-fast", dev);
  claims_.latency = 300ms;
  ASSERT_TRUE(reported_.prepare({.ns = "team", .uid = "uid-fast", .name = "fast"}).ok());
  claims_.latency = 3s;  // then not found: a failure that took 3 s
  EXPECT_FALSE(reported_.prepare({.ns = "team", .uid = "uid-gone", .name = "gone"}).ok());
  claims_.latency = 0s;
  ASSERT_TRUE(reported_.unprepare({.ns = "team", .uid = "uid-fast", .name = "fast"}).ok());

  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr("# TYPE rdmanet_dra_claim_operations_total counter"));
  EXPECT_THAT(
      text, HasSubstr("rdmanet_dra_claim_operations_total{operation=\"prepare\",result=\"ok\"} 1"));
  EXPECT_THAT(text, HasSubstr("rdmanet_dra_claim_operations_total{operation=\"prepare\",result="
                              "\"error\"} 1"));
  EXPECT_THAT(text, HasSubstr("rdmanet_dra_claim_operations_total{operation=\"unprepare\",result="
                              "\"ok\"} 1"));
  EXPECT_THAT(text, HasSubstr("# TYPE rdmanet_dra_claim_operation_duration_seconds histogram"));
  const std::string prep =
      "rdmanet_dra_claim_operation_duration_seconds_bucket{operation=\"prepare\",";
  EXPECT_THAT(text, HasSubstr(prep + "le=\"0.25\"} 0"));
  EXPECT_THAT(text, HasSubstr(prep + "le=\"0.5\"} 1"));
  EXPECT_THAT(text, HasSubstr(prep + "le=\"2.5\"} 1"));
  EXPECT_THAT(text, HasSubstr(prep + "le=\"5\"} 2"));
  EXPECT_THAT(text, HasSubstr(prep + "le=\"+Inf\"} 2"));
  EXPECT_THAT(
      text,
      HasSubstr("rdmanet_dra_claim_operation_duration_seconds_sum{operation=\"prepare\"} 3.3"));
  EXPECT_THAT(text, HasSubstr("rdmanet_dra_claim_operation_duration_seconds_count{operation="
                              "\"unprepare\"} 1"));
  EXPECT_THAT(text, HasSubstr("rdmanet_dra_claim_operation_duration_seconds_bucket{operation="
                              "\"unprepare\",le=\"0.005\"} 1"));
}

TEST_F(PrepareReportTest, ANodeThatPreparedNothingHasNoDraSeries) {
  EXPECT_THAT(metrics_.render(), Not(HasSubstr("rdmanet_dra_")));
}

TEST(PrepareFailedEventTest, IsAboutTheOnePodTheClaimNamesAndNamesTheClaimAndTheError) {
  const ClaimRef ref{.ns = "team", .uid = "uid-1", .name = "nic-claim"};
  const Error err = makeError(ErrorCode::kDeviceNotFound, "device pci-0000-99-00-0 is not ours");
  const auto e = prepareFailedEvent(kDriver, ref, ClaimPod{.name = "trainer-0", .uid = kPod}, err);
  EXPECT_EQ(e.about.kind, "Pod");
  EXPECT_EQ(e.about.api_version, "v1");
  EXPECT_EQ(e.about.ns, "team");
  EXPECT_EQ(e.about.name, "trainer-0");
  EXPECT_EQ(e.about.uid, kPod);
  EXPECT_EQ(e.message,
            "rdma.rdmanet.io could not prepare ResourceClaim team/nic-claim: device "
            "pci-0000-99-00-0 is not ours");
  const auto c = prepareFailedEvent(kDriver, ref, std::nullopt, err);
  EXPECT_EQ(c.about.kind, "ResourceClaim");
  EXPECT_EQ(c.about.api_version, "resource.k8s.io/v1");
  EXPECT_EQ(c.about.name, "nic-claim");
  EXPECT_EQ(c.about.uid, "uid-1");
  EXPECT_EQ(c.message, e.message);
}

TEST(OnePodOfTest, TheOwnerElseTheOnlyReservationElseNone) {
  const json one = json::array({{{"resource", "pods"}, {"name", "trainer-0"}, {"uid", kPod}}});
  json c = oneNicClaim("c", "u", "d", one);
  ASSERT_TRUE(onePodOf(testing::decodedClaim(c)).has_value());
  EXPECT_EQ(onePodOf(testing::decodedClaim(c))->name, "trainer-0");
  EXPECT_EQ(onePodOf(testing::decodedClaim(c))->uid, kPod);
  // Shared by two pods: which one this node prepares for is not in the claim.
  json two = one;
  two.push_back({{"resource", "pods"}, {"name", "trainer-1"}, {"uid", "5c8f3d2b-1e4a"}});
  EXPECT_FALSE(onePodOf(testing::decodedClaim(oneNicClaim("c", "u", "d", two))).has_value());
  EXPECT_FALSE(onePodOf(testing::decodedClaim(oneNicClaim("c", "u", "d"))).has_value());
  // A pod's own claim (from its ResourceClaimTemplate): the owner, whatever the reservations.
  c = oneNicClaim("c", "u", "d", two);
  c["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                                   {"kind", "Pod"},
                                                   {"name", "owner"},
                                                   {"uid", "0a1b"},
                                                   {"controller", true}}});
  ASSERT_TRUE(onePodOf(testing::decodedClaim(c)).has_value());
  EXPECT_EQ(onePodOf(testing::decodedClaim(c))->name, "owner");
  // Names that could not go into an Event are no pod.
  EXPECT_FALSE(
      onePodOf(testing::decodedClaim(oneNicClaim(
                   "c", "u", "d",
                   json::array({{{"resource", "pods"}, {"name", "Bad_Name"}, {"uid", kPod}}}))))
          .has_value());
}

}  // namespace
}  // namespace rdmanet::dp
