// NodePrepareResources within kubelet's deadline (issue 23, item 1): a claim whose GET is slower
// than kubelet's call fails by the call's deadline and commits nothing, even when the API server
// answers later; meanwhile another claim, whose GET answers at once, is prepared at once.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::DraPrepareTest;
using testing::filesUnder;
using testing::readJson;

using Ms = std::chrono::milliseconds;

Ms since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<Ms>(std::chrono::steady_clock::now() - t0);
}

TEST_F(DraPrepareTest, AClaimWhoseGetOutlivesKubeletsDeadlineFailsInTimeAndLeavesNothing) {
  startRegistered(api_->url());
  const std::string slow =
      createClaim("slow-get", json::array({result("nic", dra::pciDeviceName(node_.vf(0, 0)))}));
  const std::string fast =
      createClaim("fast-get", json::array({result("nic", dra::pciDeviceName(node_.vf(0, 1)))}));
  // The server answers the slow claim's GET after 3 s: well after kubelet's 1.5 s deadline.
  constexpr int kAnswerAfterMs = 3000;
  constexpr Ms kKubeletDeadline = 1500ms;
  api_->delay("GET", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/slow-get",
              kAnswerAfterMs, 1);
  const int gets_before = api_->stats()["requests"].value("GET", 0);

  const auto t0 = std::chrono::steady_clock::now();
  auto slow_call = std::async(std::launch::async, [&] {
    (void)kubelet_->prepare({{"team", slow, "slow-get"}}, kKubeletDeadline);
    return since(t0);
  });
  // Once the slow GET is at the server, the other claim: prepared within 1 s all the same.
  while (api_->stats()["requests"].value("GET", 0) <= gets_before && since(t0) < 5s) {
    std::this_thread::sleep_for(5ms);  // polling the server's counter
  }
  const auto t1 = std::chrono::steady_clock::now();
  auto fast_resp = kubelet_->prepare({{"team", fast, "fast-get"}});
  const Ms fast_took = since(t1);
  ASSERT_TRUE(fast_resp) << kubelet_->lastError();
  ASSERT_EQ(fast_resp->claims().at(fast).error(), "");
  EXPECT_LT(fast_took, 1000ms) << "the prompt claim waited for the slow one";

  // Kubelet's call ends by its deadline either way (DEADLINE_EXCEEDED, or a per-claim error).
  const Ms slow_took = slow_call.get();
  EXPECT_LT(slow_took, kKubeletDeadline + 500ms);

  // Past the moment the server answers the slow GET, nothing of the slow claim is committed:
  // polled until well after the answer, so a late commit would be seen.
  const fs::path slow_spec = cdi_dir_ / claimSpecFileName(slow);
  const fs::path checkpoint = kubelet_dir_ / "plugins" / testing::kDriver / "checkpoint.json";
  auto committed = [&] {
    return fs::exists(slow_spec) || readJson(checkpoint).dump().find(slow) != std::string::npos;
  };
  bool late_commit = false;
  while (!late_commit && since(t0) < Ms(2 * kAnswerAfterMs)) {
    late_commit = committed();
    std::this_thread::sleep_for(20ms);  // polling the files
  }
  EXPECT_FALSE(late_commit) << "a prepare committed after kubelet's deadline";
  EXPECT_EQ(filesUnder(cdi_dir_), std::set<std::string>{claimSpecFileName(fast)});
  RecordProperty("fast_prepare_ms", static_cast<int>(fast_took.count()));
  RecordProperty("slow_prepare_ms", static_cast<int>(slow_took.count()));
  std::printf(
      "prepare with a stalled claim GET alongside: prompt claim %lld ms, stalled claim "
      "ended at %lld ms (deadline %lld ms)\n",
      static_cast<long long>(fast_took.count()), static_cast<long long>(slow_took.count()),
      static_cast<long long>(kKubeletDeadline.count()));
}

}  // namespace
}  // namespace rdmanet::dp
