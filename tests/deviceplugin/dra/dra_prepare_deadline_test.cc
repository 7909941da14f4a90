// NodePrepareResources within kubelet's deadline (issue 23, item 1): a claim whose GET is slower
// than kubelet's call fails by the call's deadline and commits nothing, even when the API server
// answers later; meanwhile another claim, whose GET answers at once, is prepared at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"
#include "tests/fakes/eventually.h"

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
  // Once the slow GET is at the server, the other claim: prepared without waiting for it.
  (void)rdmanet::testing::eventually(  // polling the server's counter
      [&] { return api_->stats()["requests"].value("GET", 0) > gets_before; }, 5s);
  const auto t1 = std::chrono::steady_clock::now();
  auto fast_resp = kubelet_->prepare({{"team", fast, "fast-get"}});
  const Ms fast_took = since(t1);
  ASSERT_TRUE(fast_resp) << kubelet_->lastError();
  ASSERT_EQ(fast_resp->claims().at(fast).error(), "");
  // Half the slow answer's delay: the prompt claim did not wait for it.
  EXPECT_LT(fast_took, Ms(kAnswerAfterMs) / 2) << "the prompt claim waited for the slow one";

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
  // Real time is what is under test: the stalled GET is answered after kubelet's deadline, and
  // nothing may be committed until well after that answer (polling the files).
  const bool late_commit = rdmanet::testing::eventually(
      committed, std::max(Ms(0), Ms(2 * kAnswerAfterMs) - since(t0)), 20ms);
  EXPECT_FALSE(late_commit) << "a prepare committed after kubelet's deadline";
  EXPECT_EQ(filesUnder(cdi_dir_), testing::specsOf({fast}));
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
