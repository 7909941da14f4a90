// The daemon loop in process: the real core, the real device-plugin front with its real gRPC
// endpoints, and the stand-in kubelet (a real gRPC peer built from kubelet's protos), over a
// simulated node, on a FakeClock. Timers (registration backoff, debounce, resync) fire when the
// test advances the clock, never by waiting; the only real-time waits are for gRPC round trips
// on loopback sockets, polled turn by turn with a deadline.
#include "deviceplugin/daemon/daemon.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>

#include "deviceplugin/v1beta1/device_plugin_front.h"
#include "tests/deviceplugin/fake_kubelet/fake_kubelet.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using testing::TestNode;

// The real registrar, counting Register calls per resource; can run a hook just before the
// next call goes out.
class CountingRegistrar final : public KubeletRegistrar {
 public:
  explicit CountingRegistrar(std::unique_ptr<KubeletRegistrar> inner) : inner_(std::move(inner)) {}
  Status registerPool(const std::filesystem::path& kubelet_socket,
                      const Registration& reg) override {
    std::function<void()> hook;
    {
      std::lock_guard lock(mu_);
      ++calls_[reg.resource_name];
      hook = std::exchange(before_next_, nullptr);
    }
    if (hook) hook();
    return inner_->registerPool(kubelet_socket, reg);
  }
  int calls(const std::string& resource) {
    std::lock_guard lock(mu_);
    return calls_[resource];
  }
  void reset() {
    std::lock_guard lock(mu_);
    calls_.clear();
  }
  void beforeNext(std::function<void()> hook) {
    std::lock_guard lock(mu_);
    before_next_ = std::move(hook);
  }

 private:
  std::unique_ptr<KubeletRegistrar> inner_;
  std::mutex mu_;
  std::map<std::string, int> calls_;
  std::function<void()> before_next_;
};

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

// A kubelet restart fires two triggers: the daemon's sockets being deleted (re-served, then
// registered) and kubelet.sock appearing. Kubelet keeps one client per resource and refuses a
// second Register while the first one's client is connected, so each pool must register exactly
// once with the new kubelet, however the two triggers interleave.
TEST_F(DaemonTest, KubeletRestartRegistersEachPoolOnce) {
  auto counting = std::make_unique<CountingRegistrar>(std::move(registrar_));
  CountingRegistrar* registrar = counting.get();
  registrar_ = std::move(counting);
  const auto dir = testing::makeTempDir("config");
  const auto file = dir / "config.json";
  std::ofstream(file) << R"({"resourceList": [{"resourceName": "vf"}, {"resourceName": "more",
      "selectors": [{"pfNames": ["ens1f0"]}]}]})";
  auto cfg = loadConfigFile(file);
  ASSERT_TRUE(cfg.ok());
  startDaemon(*cfg);
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  ASSERT_TRUE(kubelet_->waitForDevices("rdma/vf", 5s));
  ASSERT_TRUE(kubelet_->waitForDevices("rdma/more", 5s));
  registrar->reset();

  // Kubelet goes and, as it starts again, deletes every socket in the directory...
  kubelet_->stop();
  for (const auto& e : std::filesystem::directory_iterator(kubelet_dir_ / "device-plugins")) {
    if (e.is_socket()) std::filesystem::remove(e.path());
  }
  // ... and serves kubelet.sock before the daemon has seen it appear: the first Register (asked
  // for by a re-served socket) reaches the new kubelet, as it did under a real kubelet.
  registrar->beforeNext([this] { EXPECT_TRUE(kubelet_->start()); });
  ASSERT_TRUE(turnUntil([&] {
    return registrar->calls("rdma/vf") >= 1 && registrar->calls("rdma/more") >= 1 &&
           front_->ready();
  }));
  // Let every trigger and any retry play out.
  for (int i = 0; i < 6; ++i) {
    settle();
    clock_.advance(5s);
  }
  settle();
  EXPECT_EQ(registrar->calls("rdma/vf"), 1) << human_.str();
  EXPECT_EQ(registrar->calls("rdma/more"), 1);
  EXPECT_EQ(metric("rdmanet_dp_registrations_total{resource=\"rdma/vf\",result=\"refused\"} "), "");
  EXPECT_TRUE(front_->ready());
  EXPECT_TRUE(daemon_->ready());
  // The resource is usable again: the new kubelet has the full list and can allocate.
  ASSERT_TRUE(kubelet_->waitForHealthy("rdma/vf", 16, 16, 5s));
  const auto devs = kubelet_->devices("rdma/vf");
  ASSERT_FALSE(devs.empty());
  EXPECT_TRUE(kubelet_->allocate("rdma/vf", {{devs.front().id}}));
  std::filesystem::remove_all(dir);
}

// kubelet.sock replaced while a Register is out: the daemon cannot tell which kubelet took it,
// registers again and is refused ("already connected"). Kubelet watching the endpoint settles
// it: registered, no retry loop against the refusal.
TEST_F(DaemonTest, ADuplicateRefusedWhileKubeletWatchesIsNotRetriedForever) {
  auto counting = std::make_unique<CountingRegistrar>(std::move(registrar_));
  CountingRegistrar* registrar = counting.get();
  registrar_ = std::move(counting);
  registrar->beforeNext([this] {
    kubelet_->stop();
    EXPECT_TRUE(kubelet_->start());
  });
  startDaemon();
  for (int i = 0; i < 20 && !front_->ready(); ++i) {
    for (int j = 0; j < 40 && !front_->ready(); ++j) daemon_->runOnce(5ms);
    clock_.advance(1s);  // lets a refused retry go out
  }
  ASSERT_TRUE(front_->ready()) << human_.str();
  // The hook hits whichever pool goes first: count both.
  const int calls = registrar->calls("rdma/vf") + registrar->calls("rdma/shared");
  EXPECT_LE(calls, 6);
  for (int i = 0; i < 6; ++i) {
    clock_.advance(5s);
    settle();
  }
  EXPECT_EQ(registrar->calls("rdma/vf") + registrar->calls("rdma/shared"), calls);
  EXPECT_TRUE(front_->ready());
  EXPECT_TRUE(kubelet_->waitForHealthy("rdma/vf", 16, 16, 5s));
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
