// Bounded shutdown of the real binary with --api dra (issue 23, item 5): SIGTERM ends it within
// 5 s while the API server stalls every request, with a ResourceSlice publish and a claim's
// prepare both waiting on it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <future>

#include "tests/deviceplugin/dra/dra_binary_fixture.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::DraBinaryTest;
using testing::kNode;

TEST_F(DraBinaryTest, SigtermExitsWithinFiveSecondsWhileTheApiServerStalls) {
  api_->createNode(kNode);
  const std::string uid =
      createClaim("stalled", json::array({result("nic", dra::pciDeviceName(node_.vf(0, 0)))}));
  // From now on every GET stalls for a minute, then gets no answer: the publisher's node and
  // slice reads and the claim's read.
  api_->hang("GET", "/api", 60000, 1000);
  const int gets_before = api_->stats()["requests"].value("GET", 0);
  startBinary();
  ASSERT_TRUE(kubelet_->waitRegistrations(1, 30s));
  auto prepare = std::async(std::launch::async, [&] {
    return kubelet_->prepare({{"team", uid, "stalled"}}, 45s);
  });
  // Both the publisher's first GET and the claim's are at the server.
  ASSERT_TRUE(rdmanet::testing::eventually(  // polling the server's counter
      [&] { return api_->stats()["requests"].value("GET", 0) >= gets_before + 2; }));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid_, SIGTERM);
  const auto status = waitExit(10s);
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  ASSERT_TRUE(status.has_value()) << "still running 10 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  EXPECT_LT(took, 5s) << took.count() << " ms";
  std::printf(
      "SIGTERM with a stalled API server (a publish and a prepare in flight): exit in "
      "%lld ms\n",
      static_cast<long long>(took.count()));
  auto r = prepare.get();  // kubelet's call ends with the daemon
  if (r) {
    EXPECT_NE(r->claims().at(uid).error(), "");
  }
}

}  // namespace
}  // namespace rdmanet::dp
