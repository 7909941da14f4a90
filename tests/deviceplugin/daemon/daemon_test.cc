// The daemon loop in process: the real core, the real device-plugin front with its real gRPC
// endpoints, and the stand-in kubelet (a real gRPC peer built from kubelet's protos), over a
// simulated node, on a FakeClock. Timers (registration backoff, debounce, resync) fire when the
// test advances the clock, never by waiting; the only real-time waits are for gRPC round trips
// on loopback sockets, polled turn by turn with a deadline.
#include "deviceplugin/daemon/daemon.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "deviceplugin/v1beta1/device_plugin_front.h"
#include "tests/deviceplugin/fake_kubelet/fake_kubelet.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using testing::TestNode;

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubelet_dir_ = testing::makeTempDir("kubelet");
    std::filesystem::create_directories(kubelet_dir_ / "device-plugins");
    kubelet_ = std::make_unique<fakekubelet::FakeKubelet>(kubelet_dir_, &log_);
    ASSERT_TRUE(kubelet_->start());
  }
  void TearDown() override {
    if (daemon_) front_->stop();
    daemon_.reset();
    front_.reset();
    kubelet_->stop();
    std::filesystem::remove_all(kubelet_dir_);
  }

  void startDaemon(PluginConfig config = defaultConfig(), std::filesystem::path config_path = {}) {
    front_ =
        std::make_unique<DevicePluginFront>(DevicePluginFrontOptions{.kubelet_dir = kubelet_dir_},
                                            DevicePluginFrontDeps{.clock = &clock_,
                                                                  .endpoints = endpoints_.get(),
                                                                  .registrar = registrar_.get(),
                                                                  .metrics = &metrics_});
    daemon_ = std::make_unique<Daemon>(
        DaemonOptions{.sysfs_root = node_.root(),
                      .config_path = std::move(config_path),
                      .handle_signals = false,
                      .uevents = false},
        std::move(config), DaemonDeps{.clock = &clock_, .front = front_.get(), .on_ready = [this] {
                                        ++ready_calls_;
                                      }});
    ASSERT_TRUE(daemon_->start().ok());
  }

  // Turns the loop until `pred` holds; false after 10 s of real time (gRPC round trips only).
  bool turnUntil(const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      daemon_->runOnce(5ms);
    }
    return pred();
  }
  // Turns the loop a few times without moving the clock (lets queued results arrive).
  void settle() {
    for (int i = 0; i < 20; ++i) daemon_->runOnce(5ms);
  }
  std::string metric(const std::string& line_prefix) {
    std::istringstream in(metrics_.render());
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with(line_prefix)) return line.substr(line_prefix.size());
    }
    return "";
  }

  TestNode node_;
  rdmanet::testing::FakeClock clock_;
  Metrics metrics_;
  std::filesystem::path kubelet_dir_;
  std::ostringstream json_, human_;
  fakekubelet::EventLog log_{&json_, &human_};
  std::unique_ptr<fakekubelet::FakeKubelet> kubelet_;
  std::unique_ptr<EndpointFactory> endpoints_ = makeGrpcEndpointFactory();
  std::unique_ptr<KubeletRegistrar> registrar_ = makeGrpcRegistrar(2s);
  std::unique_ptr<DevicePluginFront> front_;
  std::unique_ptr<Daemon> daemon_;
  int ready_calls_ = 0;
};

TEST_F(DaemonTest, RegistersEveryPoolAndSignalsReadyOnce) {
  startDaemon();
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  EXPECT_TRUE(kubelet_->waitForDevices("rdma/vf", 5s));
  EXPECT_TRUE(kubelet_->waitForHealthy("rdma/vf", 16, 16, 5s));
  settle();
  EXPECT_EQ(ready_calls_, 1);
  EXPECT_TRUE(daemon_->ready());
}

TEST_F(DaemonTest, RefusedRegistrationIsRetriedOnlyWhenTheBackoffHasPassed) {
  kubelet_->setRefuse(true);
  startDaemon();
  const std::string refused =
      "rdmanet_dp_registrations_total{resource=\"rdma/vf\",result=\"refused\"} ";
  ASSERT_TRUE(turnUntil([&] { return metric(refused) == "1"; }));
  settle();  // no time passes on the clock: no retry, however often the loop turns
  EXPECT_EQ(metric(refused), "1");
  clock_.advance(999ms);
  settle();
  EXPECT_EQ(metric(refused), "1");
  clock_.advance(1ms);  // a refusal backs off 1 s
  ASSERT_TRUE(turnUntil([&] { return metric(refused) == "2"; }));
  kubelet_->setRefuse(false);
  clock_.advance(2s);  // the next backoff is 2 s
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  EXPECT_EQ(ready_calls_, 1);
}

TEST_F(DaemonTest, ResyncOnTheClockPicksUpAPfGoingDown) {
  startDaemon();
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  node_.tree().setNetdevUp(node_.pfNetdev(0), false);  // no netlink here: sysfs tells
  settle();
  EXPECT_EQ(front_->pool("rdma/vf")->snapshot().devices.size(), 16u);
  EXPECT_EQ(metric("rdmanet_dp_devices{resource=\"rdma/vf\",health=\"unhealthy\"} "), "0");
  clock_.advance(30s);  // the resync interval
  daemon_->runOnce(0ms);
  EXPECT_EQ(metric("rdmanet_dp_devices{resource=\"rdma/vf\",health=\"unhealthy\"} "), "4");
  EXPECT_TRUE(kubelet_->waitForHealthy("rdma/vf", 12, 16, 5s));
}

TEST_F(DaemonTest, ConfigEditIsAppliedAfterItsDebounce) {
  const auto dir = testing::makeTempDir("config");
  const auto file = dir / "config.json";
  std::ofstream(file) << R"({"resourceList": [{"resourceName": "vf"}]})";
  auto cfg = loadConfigFile(file);
  ASSERT_TRUE(cfg.ok());
  startDaemon(*cfg, file);
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  std::ofstream(file) << R"({"resourceList": [{"resourceName": "vf"}, {"resourceName": "more",
      "selectors": [{"pfNames": ["ens1f0"]}]}]})";
  settle();  // the inotify event arrives; the reload waits for its debounce on the clock
  EXPECT_EQ(front_->pool("rdma/more"), nullptr);
  clock_.advance(100ms);
  ASSERT_TRUE(turnUntil([&] { return front_->pool("rdma/more") != nullptr; }));
  EXPECT_TRUE(turnUntil([&] { return front_->ready(); }));
  std::filesystem::remove_all(dir);
}

TEST_F(DaemonTest, HeartbeatFollowsEveryLoopTurn) {
  startDaemon();
  const auto first = daemon_->heartbeat();
  clock_.advance(7s);
  EXPECT_EQ(daemon_->heartbeat(), first);  // the loop has not turned since
  daemon_->runOnce(0ms);
  EXPECT_EQ(daemon_->heartbeat(), first + 7s);
}

}  // namespace
}  // namespace rdmanet::dp
