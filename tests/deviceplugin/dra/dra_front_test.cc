// DraFront in the daemon loop: registration through the plugin watcher's socket, kubelet
// restarts, and the health stream following the core's health model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "deviceplugin/pools/node_pools.h"
#include "proto/kubelet/dra-health/v1/api.pb.h"
#include "tests/deviceplugin/dra/dra_fixture.h"
#include "tests/fakes/eventually.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::DraDaemonFixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DraFrontTest : public DraDaemonFixture {
 protected:
  // Waits (real time, bounded) until every thread sleeping on the clock sleeps for a time still
  // ahead of it: what the last advance set off is done.
  bool clockIdle() {
    return turnUntil([&] { return clock_.idle(); });
  }
};

// Counts the snapshots the front hands to the ResourceSlice side.
class CountingPublisher final : public DevicePublisher {
 public:
  void publish(std::shared_ptr<const DeviceSnapshot>, bool) override { ++count_; }
  int count() const { return count_.load(); }

 private:
  std::atomic<int> count_{0};
};

TEST_F(DraFrontTest, RegistersThroughThePluginWatcherAsADraPlugin) {
  startDaemon();
  EXPECT_FALSE(front_->ready());
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  EXPECT_TRUE(fs::is_socket(kubelet_dir_ / "plugins_registry/rdma.rdmanet.io-reg.sock"));
  EXPECT_EQ(kubelet_->pluginName(), "rdma.rdmanet.io");
  EXPECT_EQ(kubelet_->endpoint(), (kubelet_dir_ / "plugins/rdma.rdmanet.io/dra.sock").string());
  EXPECT_THAT(kubelet_->versions(), ElementsAre("v1.DRAPlugin"));
  EXPECT_EQ(kubelet_->registrations(), 1);
}

TEST_F(DraFrontTest, ARefusalIsLoggedAndTheSocketServedAgainAfterASecondOnTheClock) {
  kubelet_->setRefusal("driver rdma.rdmanet.io already registered");
  startDaemon();
  ASSERT_TRUE(kubelet_->waitRefusals(1, 10s));
  // The front has taken the refusal in once it has a retry on its clock.
  ASSERT_TRUE(turnUntil([&] { return front_->nextDeadline().has_value(); }));
  EXPECT_EQ(*front_->nextDeadline(), clock_.now() + 1s);
  settle();  // no time passes on the clock: no retry however often the loop turns
  EXPECT_EQ(kubelet_->refusals(), 1);
  EXPECT_FALSE(front_->ready());
  clock_.advance(999ms);
  settle();
  EXPECT_EQ(kubelet_->refusals(), 1);
  clock_.advance(1ms);
  ASSERT_TRUE(turnUntil([&] { return kubelet_->refusals() == 2; }));
  ASSERT_TRUE(turnUntil([&] { return front_->nextDeadline().has_value(); }));
  kubelet_->setRefusal("");
  clock_.advance(1s);
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  EXPECT_EQ(kubelet_->registrations(), 1);
}

TEST_F(DraFrontTest, ADeletedRegistrationSocketIsServedAgainAtOnce) {
  startRegistered();
  fs::remove(front_->registrySocket());
  // No clock movement: the inotify event alone brings the socket back and kubelet registers it.
  ASSERT_TRUE(turnUntil([&] { return kubelet_->registrations() == 2 && front_->ready(); }));
  EXPECT_TRUE(fs::is_socket(front_->registrySocket()));
}

TEST_F(DraFrontTest, ADeletedDraSocketIsServedAgain) {
  startRegistered();
  fs::remove(front_->draSocket());
  ASSERT_TRUE(turnUntil([&] { return fs::is_socket(front_->draSocket()); }));
  kubelet_->watchHealth();
  EXPECT_TRUE(kubelet_->waitHealth(dra::pciDeviceName(node_.vf(0, 0)), ::v1::HEALTHY, 5s));
}

TEST_F(DraFrontTest, AKubeletRestartThatRecreatesTheRegistryIsFollowedWithinASecond) {
  startRegistered();
  kubelet_->stop();
  fs::remove_all(kubelet_dir_ / "plugins_registry");
  settle();
  EXPECT_FALSE(front_->ready());
  // The new kubelet creates the directory and watches it; the front notices on its next check.
  kubelet_ = std::make_unique<testing::FakeDraKubelet>(kubelet_dir_);
  ASSERT_TRUE(kubelet_->start());
  settle();
  clock_.advance(500ms);
  ASSERT_TRUE(turnUntil([&] { return kubelet_->registrations() == 1 && front_->ready(); }));
}

TEST_F(DraFrontTest, HealthStreamReportsLinkDownWithTheReasonAndRecovery) {
  startRegistered();
  kubelet_->watchHealth();
  const std::string vf = dra::pciDeviceName(node_.vf(0, 1));
  const std::string other_pf_vf = dra::pciDeviceName(node_.vf(2, 0));
  ASSERT_TRUE(kubelet_->waitHealth(vf, ::v1::HEALTHY, 5s));
  // Every device in every answer: 16 VFs and 4 shared PFs.
  EXPECT_TRUE(kubelet_->health(dra::pciDeviceName(node_.pf(3))).has_value());
  EXPECT_TRUE(kubelet_->health(dra::pciDeviceName(node_.vf(3, 3))).has_value());

  node_.tree().setNetdevUp(node_.pfNetdev(0), false);
  clock_.advance(30s);    // no netlink here: the resync reads sysfs
  daemon_->runOnce(0ms);  // the loop hands the new pools to the front
  ASSERT_TRUE(kubelet_->waitHealth(vf, ::v1::UNHEALTHY, 1s));
  EXPECT_THAT(kubelet_->health(vf)->message, HasSubstr(node_.pfNetdev(0)));
  EXPECT_EQ(kubelet_->health(other_pf_vf)->health, ::v1::HEALTHY);

  node_.tree().setNetdevUp(node_.pfNetdev(0), true);
  clock_.advance(30s);
  daemon_->runOnce(0ms);
  ASSERT_TRUE(kubelet_->waitHealth(vf, ::v1::HEALTHY, 1s));
  EXPECT_EQ(kubelet_->health(vf)->message, "");
}

TEST_F(DraFrontTest, AnUnchangedApplyDoesNotWakeHealthStreams) {
  startRegistered();
  kubelet_->watchHealth();
  ASSERT_TRUE(kubelet_->waitHealth(dra::pciDeviceName(node_.vf(0, 0)), ::v1::HEALTHY, 5s));
  const auto version = front_->inventory()->version;
  clock_.advance(30s);  // a resync that finds nothing new
  daemon_->runOnce(0ms);
  EXPECT_EQ(front_->inventory()->version, version);
}

// Kubelet takes a stream's first message as the state of every device (issue 23, item 3). The
// DRA socket is served from start-up, before the first scan reaches the front: a stream opened
// then used to get an empty first message.
TEST_F(DraFrontTest, AHealthStreamOpenedBeforeTheFirstScanListsEveryDeviceInItsFirstMessage) {
  client_ = std::make_unique<kube::KubeClient>(testing::serverConfig("http://127.0.0.1:1"));
  reader_ = std::make_unique<KubeClaimReader>(*client_);
  front_ = std::make_unique<DraFront>(
      DraFrontOptions{.kubelet_dir = kubelet_dir_, .node = testing::kNode, .cdi_dir = cdi_dir_},
      DraFrontDeps{.clock = &clock_, .claims = reader_.get()});
  ASSERT_TRUE(front_->start().ok());
  kubelet_->watchHealthAt(front_->draSocket().string());
  // No state yet, so no message: polled for a while (a message would come within milliseconds).
  (void)rdmanet::testing::eventually([&] { return kubelet_->firstHealthDevices().has_value(); },
                                     500ms, 10ms);
  EXPECT_FALSE(kubelet_->firstHealthDevices().has_value())
      << "a first message before any state, listing " << *kubelet_->firstHealthDevices();
  const Sysfs sysfs(node_.root());
  NodePools core(sysfs, defaultConfig());
  core.rescan();
  front_->apply(core.config(), core.build().pools);
  const size_t devices = front_->inventory()->devices.size();
  ASSERT_EQ(devices, 20u);  // 16 VFs and 4 shared PFs
  ASSERT_TRUE(rdmanet::testing::eventually(
      [&] { return kubelet_->firstHealthDevices().has_value(); }, 5s, 10ms));
  EXPECT_EQ(*kubelet_->firstHealthDevices(), static_cast<int>(devices));
  kubelet_->stopHealth();
}

// Kubelet wipes its node's slices when it starts, possibly after it registered the driver again:
// a registration publishes at once and again 3, 8 and 16 s after it, on the injected clock.
TEST_F(DraFrontTest, ARegistrationPublishesAtOnceAndAgainAfter3And8And16SecondsOnTheClock) {
  CountingPublisher publisher;
  startDaemon("http://127.0.0.1:1", &publisher);
  ASSERT_TRUE(turnUntil([&] { return front_->ready(); }));
  settle();
  // The first apply's publish, and the registration's.
  ASSERT_EQ(publisher.count(), 2);
  int expected = 2;
  Clock::duration since = 0s;
  for (const auto at : {3s, 8s, 16s}) {
    ASSERT_EQ(front_->nextDeadline(), clock_.now() + (at - since)) << "republish at " << at.count();
    clock_.advance(at - since - 1ms);
    settle();
    EXPECT_EQ(publisher.count(), expected) << "before " << at.count() << " s";
    clock_.advance(1ms);
    ASSERT_TRUE(turnUntil([&] { return publisher.count() == expected + 1; }))
        << "at " << at.count() << " s: " << publisher.count();
    ++expected;
    since = at;
  }
  EXPECT_FALSE(front_->nextDeadline().has_value());
  clock_.advance(29s);  // past the daemon's resync: a rescan that changes nothing publishes nothing
  settle();
  EXPECT_EQ(publisher.count(), expected);
}

// Issue 23, item 9: the stream used to resend on real time, so no test could see the resend
// without waiting 10 s. On the injected clock it comes when the clock passes the period.
TEST_F(DraFrontTest, AHealthStreamResendsTheFullListWhenThePeriodPassesOnTheClock) {
  startRegistered();
  kubelet_->watchHealth();
  const std::string vf = dra::pciDeviceName(node_.vf(0, 0));
  ASSERT_TRUE(kubelet_->waitHealth(vf, ::v1::HEALTHY, 5s));
  ASSERT_TRUE(clockIdle()) << "the stream does not wait on the injected clock";
  const int first = kubelet_->healthUpdates();
  clock_.advance(10s - 1ms);  // DraFrontOptions::health_resend
  ASSERT_TRUE(clockIdle());
  settle();
  EXPECT_EQ(kubelet_->healthUpdates(), first);
  clock_.advance(1ms);
  ASSERT_TRUE(turnUntil([&] { return kubelet_->healthUpdates() == first + 1; }));
  ASSERT_TRUE(clockIdle());
  EXPECT_EQ(kubelet_->healthUpdates(), first + 1);
  kubelet_->stopHealth();
}

}  // namespace
}  // namespace rdmanet::dp
