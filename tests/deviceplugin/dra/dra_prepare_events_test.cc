// A failed prepare leaves a Kubernetes Event (deviceplugin/dra/kubelet/prepare_report.h), written
// by the recorder (deviceplugin/dra/apiserver/event_recorder.h) to the stand-in API server, which
// checks it as the real one does: on the pod the claim names, else on the claim; repeats folded;
// and a slow API server never delays a prepare.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "deviceplugin/dra/apiserver/event_recorder.h"
#include "deviceplugin/dra/kubelet/prepare_report.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::DraPrepareTest;
using ::testing::HasSubstr;
using testing::kNode;
using testing::serverConfig;

constexpr const char* kPod = "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

class DraPrepareEventsTest : public DraPrepareTest {
 protected:
  void TearDown() override {
    DraPrepareTest::TearDown();  // the front first: it reports into the recorder
    recorder_.reset();
    event_client_.reset();
  }
  void startWithEvents(EventRecorderOptions o = {}) {
    event_client_ = std::make_unique<kube::KubeClient>(
        serverConfig(api_->url()),
        kube::ClientOptions{.retry = {.max_attempts = 1}, .clock = &clock_});
    o.host = kNode;
    recorder_ = std::make_unique<KubeEventRecorder>(*event_client_, o, clock_, &metrics_);
    events_ = recorder_.get();
    startRegistered(api_->url());
  }
  // The Events in namespace team about the object named `name`, oldest first.
  json eventsAbout(const std::string& name) {
    kube::KubeClient c(serverConfig(api_->url()));
    auto r =
        c.list("/api/v1/namespaces/team/events", {.field_selector = "involvedObject.name=" + name});
    EXPECT_TRUE(r.ok()) << r.error().msg;
    if (!r.ok()) return json::array();
    json items = (*r)["items"];
    std::sort(items.begin(), items.end(), [](const json& a, const json& b) {
      return a["count"].get<int>() < b["count"].get<int>();
    });
    return items;
  }
  // Polls (real time, 10 s at most) until `n` Events are about `name`.
  json waitForEvents(const std::string& name, size_t n) {
    json items;
    turnUntil([&] {
      items = eventsAbout(name);
      return items.size() >= n;
    });
    return items;
  }
  bool metricsShow(const std::string& line) {
    return metrics_.render().find(line) != std::string::npos;
  }
  std::string prepareError(const std::string& uid, const std::string& name) {
    auto resp = kubelet_->prepare({{"team", uid, name}});
    EXPECT_TRUE(resp) << kubelet_->lastError();
    return resp ? resp->claims().at(uid).error() : "";
  }

  std::unique_ptr<kube::KubeClient> event_client_;
  std::unique_ptr<KubeEventRecorder> recorder_;
};

TEST_F(DraPrepareEventsTest, AFailedPrepareLeavesAnEventOnThePodNamingTheClaimAndTheError) {
  startWithEvents();
  // Allocated a device this node does not have: prepare fails after reading the claim.
  const std::string uid =
      createClaim("evt-pod", json::array({result("nic", "pci-0000-99-00-0")}), {"nic"},
                  json::array({{{"resource", "pods"}, {"name", "trainer-1"}, {"uid", kPod}}}));
  const std::string error = prepareError(uid, "evt-pod");
  ASSERT_NE(error, "");
  const json events = waitForEvents("trainer-1", 1);
  ASSERT_EQ(events.size(), 1u) << events.dump();
  const json& e = events[0];
  EXPECT_EQ(e["involvedObject"], json({{"apiVersion", "v1"},
                                       {"kind", "Pod"},
                                       {"namespace", "team"},
                                       {"name", "trainer-1"},
                                       {"uid", kPod}}));
  EXPECT_EQ(e["reason"], kPrepareFailedReason);
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("ResourceClaim team/evt-pod"));
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr(error));
  EXPECT_EQ(e["source"]["host"], kNode);
  EXPECT_EQ(e["count"], 1);
  EXPECT_TRUE(
      metricsShow("rdmanet_dra_claim_operations_total{operation=\"prepare\",result=\"error\"} 1"));

  // Kubelet retries: the repeats within the window are folded, not sent...
  ASSERT_NE(prepareError(uid, "evt-pod"), "");
  ASSERT_NE(prepareError(uid, "evt-pod"), "");
  EXPECT_TRUE(metricsShow("rdmanet_dra_events_total{result=\"repeat\"} 2"));
  EXPECT_EQ(eventsAbout("trainer-1").size(), 1u);
  // ...and the first after it carries them all, from the first one's time.
  clock_.advance(EventRecorderOptions{}.repeat_window + 1s);
  ASSERT_NE(prepareError(uid, "evt-pod"), "");
  const json both = waitForEvents("trainer-1", 2);
  ASSERT_EQ(both.size(), 2u) << both.dump();
  EXPECT_EQ(both[1]["count"], 4);
  EXPECT_EQ(both[1]["firstTimestamp"], e["firstTimestamp"]);
  EXPECT_TRUE(metricsShow("rdmanet_dra_events_total{result=\"sent\"} 2"));
}

TEST_F(DraPrepareEventsTest, AClaimThatCannotBeReadGetsTheEventItself) {
  startWithEvents();
  const std::string uid = "0f0e0d0c-0b0a-4908-8706-050403020100";
  const std::string error = prepareError(uid, "never-made");
  ASSERT_THAT(error, HasSubstr("404"));
  const json events = waitForEvents("never-made", 1);
  ASSERT_EQ(events.size(), 1u) << events.dump();
  EXPECT_EQ(events[0]["involvedObject"], json({{"apiVersion", "resource.k8s.io/v1"},
                                               {"kind", "ResourceClaim"},
                                               {"namespace", "team"},
                                               {"name", "never-made"},
                                               {"uid", uid}}));
  EXPECT_THAT(events[0]["message"].get<std::string>(), HasSubstr(error));
}

TEST_F(DraPrepareEventsTest, ASlowApiServerNeverDelaysAPrepareAndAFullQueueDrops) {
  startWithEvents({.queue_capacity = 2, .post_timeout = 3s});
  // Every Event is answered only after 20 s: the first POST is held by the server...
  api_->delay("POST", "/api/v1/namespaces/team/events", 20000, 10);
  const int posts = api_->stats()["requests"].value("POST", 0);
  ASSERT_NE(prepareError("0a000000-0000-4000-8000-000000000001", "slow-1"), "");
  ASSERT_TRUE(turnUntil([&] { return api_->stats()["requests"].value("POST", 0) == posts + 1; }));
  // ...while kubelet's next prepares fail and are answered at once, their Events queued (2) or
  // dropped (the rest).
  for (const char* n : {"slow-2", "slow-3", "slow-4"}) {
    ASSERT_NE(prepareError(std::string("0a000000-0000-4000-8000-00000000000") + n[5], n), "");
  }
  // Had any prepare waited for its Event, the held POST would have been answered by now.
  EXPECT_TRUE(eventsAbout("slow-1").empty());
  EXPECT_TRUE(metricsShow("rdmanet_dra_events_total{result=\"dropped\"} 1"));
  EXPECT_TRUE(
      metricsShow("rdmanet_dra_claim_operations_total{operation=\"prepare\",result=\"error\"} 4"));
  // The held POST times out (post_timeout) and the queued ones go through once the server is
  // fast again.
  api_->clearFaults();
  ASSERT_TRUE(turnUntil([&] {
    return metricsShow("rdmanet_dra_events_total{result=\"failed\"} 1") &&
           metricsShow("rdmanet_dra_events_total{result=\"sent\"} 2");
  })) << metrics_.render();
  EXPECT_EQ(eventsAbout("slow-2").size(), 1u);
  EXPECT_EQ(eventsAbout("slow-3").size(), 1u);
}

}  // namespace
}  // namespace rdmanet::dp
