// The daemon's periodic node doctor: runs on its own thread against a simulated node (fake sysfs
// tree) and the fake kernel's DCB state, keeps the last report as Prometheus text, and reports
// counter growth since its previous run. The hold and the interval are on a FakeClock: the next
// run comes when the test advances it, never by itself.
#include "deviceplugin/daemon/doctor_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <thread>

#include "tests/deviceplugin/doctor/doctor_node.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp {
namespace {

using doctor::testing::DoctorNode;
using rdmanet::testing::FakeClock;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const std::string kHw = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/";

using rdmanet::testing::eventually;  // no fixed sleeps: CONTRIBUTING.md, "Tests"

// The runner reads while the test writes: replace the file whole, as the kernel's sysfs reads
// never see a half-written value.
void writeCounter(DoctorNode& node, const std::string& name, const std::string& value) {
  const std::filesystem::path p = node.root().string() + kHw + name;
  const std::filesystem::path tmp = node.root() / "counter.tmp";  // outside the listed dir
  std::ofstream(tmp) << value << "\n";
  std::filesystem::rename(tmp, p);
}

NetlinkFactory fakeNetlink(DoctorNode& node) {
  return [&node]() -> Result<std::unique_ptr<Netlink>> {
    return std::unique_ptr<Netlink>(std::make_unique<FakeNetlink>(node.kernel()));
  };
}

// The runner waits for its hold: asleep on the clock, with no run yet.
void expectHeld(const DoctorRunner& runner, const FakeClock& clock) {
  ASSERT_TRUE(clock.waitIdle());
  EXPECT_TRUE(runner.holding());
  EXPECT_EQ(runner.runs(), 0u);
}

// The daemon's start-up path (discovery, registration) never shares the CPUs with a doctor run:
// a held runner does not run until released.
TEST(DoctorRunnerTest, HeldRunnerWaitsForReleaseBeforeItsFirstRun) {
  DoctorNode node;
  FakeClock clock;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h, .hold = 1h}, fakeNetlink(node),
                      clock);
  expectHeld(runner, clock);
  EXPECT_EQ(runner.render(), "");
  runner.release();
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  EXPECT_FALSE(runner.holding());
}

TEST(DoctorRunnerTest, HeldRunnerStartsAnywayWhenNothingReleasesItOnceTheHoldPassesOnTheClock) {
  DoctorNode node;
  FakeClock clock;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h, .hold = 2min}, fakeNetlink(node),
                      clock);
  expectHeld(runner, clock);
  clock.advance(2min - 1ms);
  expectHeld(runner, clock);
  clock.advance(1ms);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  EXPECT_FALSE(runner.holding());
}

TEST(DoctorRunnerTest, TheNextRunComesAfterTheIntervalOnTheClockAndNotBefore) {
  DoctorNode node;
  FakeClock clock;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 60s}, fakeNetlink(node), clock);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  ASSERT_TRUE(clock.waitIdle());
  clock.advance(60s - 1ms);
  ASSERT_TRUE(clock.waitIdle());
  EXPECT_EQ(runner.runs(), 1u);
  runner.release();  // after the first run: no extra run
  ASSERT_TRUE(clock.waitIdle());
  EXPECT_EQ(runner.runs(), 1u);
  clock.advance(1ms);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 2; }));
  ASSERT_TRUE(clock.waitIdle());
  EXPECT_EQ(runner.runs(), 2u);
}

TEST(DoctorRunnerTest, FirstRunHappensAtOnceAndExportsEveryCheck) {
  DoctorNode node;
  FakeClock clock;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h}, fakeNetlink(node), clock);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  const std::string text = runner.render();
  EXPECT_THAT(text, HasSubstr("# TYPE rdmanet_doctor_check gauge\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"link\",device=\"ens1f0\"} 0\n"));
  // The fake kernel answers DCB, so PFC is judged (PASS), not UNKNOWN.
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"pfc\",device=\"ens1f0\"} 0\n"));
  // No baseline on the first run: no deltas yet.
  EXPECT_THAT(text, Not(HasSubstr("rdmanet_doctor_counter_delta")));
}

TEST(DoctorRunnerTest, APortGoingDownIsSeenOnTheNextRun) {
  DoctorNode node;
  FakeClock clock;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h}, fakeNetlink(node), clock);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  ASSERT_TRUE(clock.waitIdle());
  node.tree().setNetdevUp("ens1f1", false);
  clock.advance(1h);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 2; }));
  const std::string down = "rdmanet_doctor_check{check=\"link\",device=\"ens1f1\"} 2\n";
  EXPECT_THAT(runner.render(), HasSubstr(down));
  ASSERT_TRUE(clock.waitIdle());
  node.tree().setNetdevUp("ens1f1", true);
  clock.advance(1h);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 3; }));
  const std::string up = "rdmanet_doctor_check{check=\"link\",device=\"ens1f1\"} 0\n";
  EXPECT_THAT(runner.render(), HasSubstr(up));
}

TEST(DoctorRunnerTest, CounterDeltasAreSinceThePreviousRun) {
  DoctorNode node;
  node.tree().writeAttr(kHw + "out_of_sequence", "100");
  FakeClock clock;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h}, fakeNetlink(node), clock);
  // One run after another, each once the previous is done and the clock has moved.
  auto nextRun = [&](uint64_t n) {
    ASSERT_TRUE(clock.waitIdle());
    clock.advance(1h);
    ASSERT_TRUE(eventually([&] { return runner.runs() >= n; }));
  };
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  nextRun(2);
  const std::string prefix =
      "rdmanet_doctor_counter_delta{port=\"mlx5_0/1\",counter=\"out_of_sequence\","
      "class=\"retransmit\"} ";
  // Steady counters: growth 0 from one run to the next.
  EXPECT_THAT(runner.render(), HasSubstr(prefix + "0\n"));
  ASSERT_TRUE(clock.waitIdle());
  writeCounter(node, "out_of_sequence", "130");
  nextRun(3);
  EXPECT_THAT(runner.render(), HasSubstr(prefix + "30\n"));
  // The next run's baseline is the run that saw 130: back to 0.
  nextRun(4);
  EXPECT_THAT(runner.render(), HasSubstr(prefix + "0\n"));
}

TEST(DoctorRunnerTest, WithoutNetlinkTheDcbChecksAreUnknown) {
  DoctorNode node;
  FakeClock clock;
  DoctorRunner runner(
      {.sysfs_root = node.root(), .interval = 1h},
      []() -> Result<std::unique_ptr<Netlink>> {
        return makeError(ErrorCode::kNetlinkFailure, "no socket in this test");
      },
      clock);
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  EXPECT_THAT(runner.render(),
              HasSubstr("rdmanet_doctor_check{check=\"pfc\",device=\"ens1f0\"} 3\n"));
}

TEST(DoctorRunnerTest, StopsPromptlyWhileWaitingForTheNextRun) {
  DoctorNode node;
  FakeClock clock;
  auto runner = std::make_unique<DoctorRunner>(
      DoctorRunnerOptions{.sysfs_root = node.root(), .interval = 1h}, fakeNetlink(node), clock);
  ASSERT_TRUE(eventually([&] { return runner->runs() >= 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  runner.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

// The cause of exits held up by a doctor run (issue 23): at SCHED_IDLE, a run on a busy CPU
// gets almost no CPU time, and the runner used to wait for it to finish. Here the runner's thread
// and a busy thread share one CPU, so the run crawls; stopping must still take under a second.
TEST(DoctorRunnerTest, StopDuringARunStarvedOfCpuReturnsWithinASecond) {
  DoctorNode node;
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &all)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  // Threads made from now on inherit the one CPU: the hog and the runner's thread.
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  std::atomic<bool> hog_stop{false};
  std::thread hog([&] {
    while (!hog_stop.load(std::memory_order_relaxed)) {
    }
  });
  std::atomic<bool> started{false};
  FakeClock clock;
  auto runner = std::make_unique<DoctorRunner>(
      DoctorRunnerOptions{.sysfs_root = node.root(), .interval = 1h},
      [&node, &started]() -> Result<std::unique_ptr<Netlink>> {
        started = true;  // on the runner's thread, just before its first run
        return std::unique_ptr<Netlink>(std::make_unique<FakeNetlink>(node.kernel()));
      },
      clock);
  const bool in_run = eventually([&] { return started.load(); });
  const auto t0 = std::chrono::steady_clock::now();
  runner.reset();
  const auto took = std::chrono::steady_clock::now() - t0;
  hog_stop = true;
  hog.join();
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  ASSERT_TRUE(in_run);
  EXPECT_LT(took, 1s) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms";
}

// A run that cannot end (a read that blocks, here the netlink set-up) is abandoned: the daemon
// exits anyway. The blocked call owns what it touches, so the test releases it afterwards.
TEST(DoctorRunnerTest, StopAbandonsARunThatDoesNotEndWithinTheGrace) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool entered = false, open = false;
  };
  auto gate = std::make_shared<Gate>();
  FakeClock clock;
  auto runner = std::make_unique<DoctorRunner>(
      DoctorRunnerOptions{.sysfs_root = "/nonexistent", .interval = 1h},
      [gate]() -> Result<std::unique_ptr<Netlink>> {
        std::unique_lock lk(gate->mu);
        gate->entered = true;
        gate->cv.notify_all();
        gate->cv.wait(lk, [&] { return gate->open; });
        return makeError(ErrorCode::kNetlinkFailure, "released by the test");
      },
      clock);
  {
    std::unique_lock lk(gate->mu);
    ASSERT_TRUE(gate->cv.wait_for(lk, 10s, [&] { return gate->entered; }));
  }
  const auto t0 = std::chrono::steady_clock::now();
  // Today's runner would wait for the gate: open it from here after 5 s so that it fails
  // instead of hanging.
  std::thread opener([gate] {
    std::unique_lock lk(gate->mu);
    gate->cv.wait_for(lk, 5s, [&] { return gate->open; });
    gate->open = true;
    gate->cv.notify_all();
  });
  runner.reset();
  const auto took = std::chrono::steady_clock::now() - t0;
  {
    std::lock_guard lk(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
  opener.join();
  EXPECT_LT(took, DoctorRunner::kStopGrace + 500ms)
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
}

}  // namespace
}  // namespace rdmanet::dp
