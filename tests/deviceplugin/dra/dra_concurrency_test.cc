// Prepare and unprepare at once (issue 23, item 4): kubelet calls NodePrepareResources for
// different pods in parallel, may call it again for a claim whose first call it gave up on, and
// unprepares a claim whose prepare is still running. Each case ends with the checkpoint and the
// CDI dir agreeing: a prepared claim has its spec and its entry, an unprepared one neither.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"
#include "tests/fakes/eventually.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::DraPrepareTest;
using testing::filesUnder;
using testing::readJson;
using testing::specsOf;

constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/";

class DraConcurrencyTest : public DraPrepareTest {
 protected:
  // The UIDs the checkpoint lists.
  std::set<std::string> checkpointed() {
    const json ckpt = readJson(kubelet_dir_ / "plugins" / testing::kDriver / "checkpoint.json");
    std::set<std::string> out;
    if (ckpt.is_discarded() || !ckpt.contains("claims")) return out;
    for (const auto& [uid, c] : ckpt["claims"].items()) out.insert(uid);
    return out;
  }
  // Waits (real time, polling the server's counter) until `n` more GETs than `before` came.
  void waitGets(int before, int n) {
    (void)rdmanet::testing::eventually(
        [&] { return api_->stats()["requests"].value("GET", 0) >= before + n; }, 5s, 2ms);
  }
  int gets() { return api_->stats()["requests"].value("GET", 0); }
};

TEST_F(DraConcurrencyTest, PreparesOfEightClaimsAtOnceEachGetTheirOwnDeviceAndSpec) {
  startRegistered(api_->url());
  std::vector<std::string> uids;
  for (int i = 0; i < 8; ++i) {
    const std::string name = "par-" + std::to_string(i);
    uids.push_back(createClaim(
        name, json::array({result("nic", dra::pciDeviceName(node_.vf(i / 4, i % 4)))})));
    api_->delay("GET", kClaims + name, 300, 1);  // all eight reading their claims at once
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::future<
      std::optional<k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesResponse>>>
      calls;
  for (int i = 0; i < 8; ++i) {
    calls.push_back(std::async(std::launch::async, [&, i] {
      return kubelet_->prepare({{"team", uids[i], "par-" + std::to_string(i)}});
    }));
  }
  std::set<std::string> devices;
  for (int i = 0; i < 8; ++i) {
    auto resp = calls[i].get();
    ASSERT_TRUE(resp) << kubelet_->lastError();
    const auto& c = resp->claims().at(uids[i]);
    ASSERT_EQ(c.error(), "");
    ASSERT_EQ(c.devices_size(), 1);
    EXPECT_EQ(c.devices(0).device_name(), dra::pciDeviceName(node_.vf(i / 4, i % 4)));
    devices.insert(c.devices(0).device_name());
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::printf("8 concurrent prepares, each GET held 300 ms: all answered in %lld ms\n",
              static_cast<long long>(ms.count()));
  EXPECT_EQ(devices.size(), 8u);
  const std::set<std::string> all(uids.begin(), uids.end());
  EXPECT_EQ(checkpointed(), all);
  EXPECT_EQ(filesUnder(cdi_dir_), specsOf(all));
}

TEST_F(DraConcurrencyTest, TheSameClaimPreparedTwiceAtOnceGivesOneAnswerAndOneSpec) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("twice", json::array({result("nic", dra::pciDeviceName(node_.vf(1, 1)))}));
  api_->delay("GET", std::string(kClaims) + "twice", 300, 2);
  auto a = std::async(std::launch::async, [&] {
    return kubelet_->prepare({{"team", uid, "twice"}});
  });
  auto b = std::async(std::launch::async, [&] {
    return kubelet_->prepare({{"team", uid, "twice"}});
  });
  auto ra = a.get(), rb = b.get();
  ASSERT_TRUE(ra && rb) << kubelet_->lastError();
  ASSERT_EQ(ra->claims().at(uid).error(), "");
  EXPECT_EQ(ra->claims().at(uid).SerializeAsString(), rb->claims().at(uid).SerializeAsString());
  EXPECT_EQ(checkpointed(), (std::set<std::string>{uid}));
  EXPECT_EQ(filesUnder(cdi_dir_), specsOf({uid}));

  auto un = kubelet_->unprepare({{"team", uid, "twice"}});
  ASSERT_TRUE(un) << kubelet_->lastError();
  EXPECT_EQ(un->claims().at(uid).error(), "");
  EXPECT_TRUE(checkpointed().empty());
  EXPECT_TRUE(filesUnder(cdi_dir_).empty());
}

// Kubelet gave up on a prepare whose GET stalls, unprepared the claim, and prepares it again for
// the pod's next try while the first call is still reading. The unprepare cancels the call it
// raced, not the one that came after it.
TEST_F(DraConcurrencyTest, APrepareStartedAfterAnUnprepareIsNotCancelledByIt) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("again", json::array({result("nic", dra::pciDeviceName(node_.vf(2, 2)))}));
  api_->delay("GET", std::string(kClaims) + "again", 1500, 1);
  const int before = gets();
  auto first = std::async(std::launch::async, [&] {
    return kubelet_->prepare({{"team", uid, "again"}});
  });
  waitGets(before, 1);
  auto un = kubelet_->unprepare({{"team", uid, "again"}});
  ASSERT_TRUE(un) << kubelet_->lastError();
  auto second = kubelet_->prepare({{"team", uid, "again"}});  // its GET answers at once
  ASSERT_TRUE(second) << kubelet_->lastError();
  EXPECT_EQ(second->claims().at(uid).error(), "");
  (void)first.get();  // cancelled, or answered from what the second committed
  EXPECT_EQ(checkpointed(), (std::set<std::string>{uid}));
  EXPECT_EQ(filesUnder(cdi_dir_), specsOf({uid}));
}

TEST_F(DraConcurrencyTest, AnUnprepareRacingSeveralPreparesOfItsClaimLeavesNothing) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("many", json::array({result("nic", dra::pciDeviceName(node_.vf(3, 0)))}));
  api_->delay("GET", std::string(kClaims) + "many", 1000, 3);
  const int before = gets();
  std::vector<std::future<bool>> calls;
  for (int i = 0; i < 3; ++i) {
    calls.push_back(std::async(std::launch::async, [&] {
      auto r = kubelet_->prepare({{"team", uid, "many"}});
      return r && r->claims().at(uid).error().empty();
    }));
  }
  waitGets(before, 3);
  auto un = kubelet_->unprepare({{"team", uid, "many"}});
  ASSERT_TRUE(un) << kubelet_->lastError();
  for (auto& c : calls) EXPECT_FALSE(c.get()) << "a prepare committed after its unprepare";
  EXPECT_TRUE(checkpointed().empty());
  EXPECT_TRUE(filesUnder(cdi_dir_).empty());
}

// Prepare and unprepare of one claim sent at the same moment, many times: whichever wins, the
// claim is either prepared (its spec and its entry) or not at all, never half.
TEST_F(DraConcurrencyTest, PrepareAndUnprepareSentTogetherNeverLeaveHalfAClaim) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("racer", json::array({result("nic", dra::pciDeviceName(node_.vf(0, 0)))}));
  int prepared = 0;
  for (int i = 0; i < 20; ++i) {
    std::promise<void> go;
    auto start = go.get_future().share();
    auto p = std::async(std::launch::async, [&] {
      start.wait();
      return kubelet_->prepare({{"team", uid, "racer"}});
    });
    auto u = std::async(std::launch::async, [&] {
      start.wait();
      return kubelet_->unprepare({{"team", uid, "racer"}});
    });
    go.set_value();
    (void)p.get();
    ASSERT_TRUE(u.get()) << kubelet_->lastError();
    const auto ck = checkpointed();
    ASSERT_EQ(filesUnder(cdi_dir_), specsOf(ck)) << "round " << i;
    ASSERT_TRUE(ck.empty() || ck == std::set<std::string>{uid}) << "round " << i;
    prepared += ck.empty() ? 0 : 1;
    auto un = kubelet_->unprepare({{"team", uid, "racer"}});
    ASSERT_TRUE(un) << kubelet_->lastError();
    ASSERT_TRUE(checkpointed().empty() && filesUnder(cdi_dir_).empty()) << "round " << i;
  }
  std::printf("prepare and unprepare raced 20 times: the prepare stood %d times\n", prepared);
}

}  // namespace
}  // namespace rdmanet::dp
