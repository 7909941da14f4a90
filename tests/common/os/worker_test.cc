// Worker and Mailbox: the one background thread and post-back queue the daemon's workers share.
// Time is a FakeClock: runs at a time the job asked for happen when the test advances the clock
// past it, never before.
#include "common/os/worker.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/os/mailbox.h"
#include "tests/fakes/call_count.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

using testing::CallCount;

// A job that counts its runs and asks to run again `period` after each (none: only when woken).
Worker::Job counting(CallCount& runs, const FakeClock& clock,
                     std::optional<Clock::duration> period = std::nullopt) {
  return [&runs, &clock, period](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
    runs.enter();
    if (!period) return std::nullopt;
    return clock.now() + *period;
  };
}

// Exactly `n` runs, once the worker is back asleep on the clock.
bool settledAt(CallCount& runs, const FakeClock& clock, int n) {
  return runs.waitFor(n) && clock.waitIdle() && runs.count() == n;
}

TEST(WorkerTest, RunsOnlyWhenWoken) {
  FakeClock clock;
  CallCount runs;
  Worker w(clock, counting(runs, clock));
  ASSERT_TRUE(clock.waitIdle());
  clock.advance(24h);
  ASSERT_TRUE(clock.waitIdle());
  EXPECT_EQ(runs.count(), 0);
  w.wake();
  EXPECT_TRUE(settledAt(runs, clock, 1));
}

TEST(WorkerTest, RunsAgainAtTheTimeTheJobAskedForOnTheClock) {
  FakeClock clock;
  CallCount runs;
  Worker w(clock, counting(runs, clock, 5s), clock.now());  // the first run at once
  ASSERT_TRUE(settledAt(runs, clock, 1));
  clock.advance(4999ms);
  EXPECT_TRUE(settledAt(runs, clock, 1));
  clock.advance(1ms);
  EXPECT_TRUE(settledAt(runs, clock, 2));
}

TEST(WorkerTest, AWakeBeforeTheTimerRunsTheJobAtOnce) {
  FakeClock clock;
  CallCount runs;
  Worker w(clock, counting(runs, clock), clock.now() + 1h);
  ASSERT_TRUE(clock.waitIdle());
  w.wake();
  ASSERT_TRUE(runs.waitFor(1));
}

TEST(WorkerTest, WakesDuringARunFoldIntoOneMoreRun) {
  FakeClock clock;
  CallCount runs;
  CallCount in_run(CallCount::Gate::kClosed);
  Worker w(clock, [&](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
    in_run.enter();
    runs.enter();
    return std::nullopt;
  });
  w.wake();
  ASSERT_TRUE(in_run.waitFor(1));
  for (int i = 0; i < 3; ++i) w.wake();
  in_run.open();
  EXPECT_TRUE(settledAt(runs, clock, 2));
}

// A throwing job (a name a tenant chose that a JSON encoder refused, say) once ended the thread
// with std::terminate, and so the daemon: now the exception is reported, and the job runs again
// kRetryAfterThrow later on the clock, and on the next wake.
TEST(WorkerTest, AJobThatThrowsIsReportedAndRunsAgainLater) {
  FakeClock clock;
  CallCount runs;
  std::mutex mu;
  std::vector<std::string> reported;
  Worker w(
      clock,
      [&](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
        runs.enter();
        throw std::runtime_error("bad name");
      },
      clock.now(),
      [&](std::string_view what) {
        std::lock_guard lk(mu);
        reported.emplace_back(what);
      });
  ASSERT_TRUE(settledAt(runs, clock, 1));
  clock.advance(Worker::kRetryAfterThrow - 1ms);
  ASSERT_TRUE(settledAt(runs, clock, 1));
  clock.advance(1ms);
  ASSERT_TRUE(settledAt(runs, clock, 2));
  w.wake();
  ASSERT_TRUE(settledAt(runs, clock, 3));
  std::lock_guard lk(mu);
  EXPECT_EQ(reported, std::vector<std::string>(3, "bad name"));
}

// Without a reporter, and with something thrown that is not a std::exception, it carries on too.
TEST(WorkerTest, AJobThatThrowsANonStandardExceptionCarriesOnWithoutAReporter) {
  FakeClock clock;
  CallCount runs;
  Worker w(clock, [&](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
    runs.enter();
    if (runs.count() == 1) throw 42;
    return std::nullopt;
  });
  w.wake();
  ASSERT_TRUE(settledAt(runs, clock, 1));
  w.wake();
  EXPECT_TRUE(settledAt(runs, clock, 2));
  EXPECT_TRUE(w.join(10s));
}

TEST(WorkerTest, StopEndsATimedWaitWithoutTheClockMoving) {
  FakeClock clock;
  CallCount runs;
  Worker w(clock, counting(runs, clock, 1h), clock.now());
  ASSERT_TRUE(settledAt(runs, clock, 1));
  EXPECT_TRUE(w.join(10s));
  EXPECT_TRUE(w.stopping());
  EXPECT_EQ(runs.count(), 1);
}

TEST(WorkerTest, TheJobSeesTheQuitFlagAndJoinWaitsForItToReturn) {
  FakeClock clock;
  std::atomic<bool> started{false}, saw_quit{false};
  Worker w(
      clock,
      [&](const std::atomic<bool>& quit) -> std::optional<Clock::time_point> {
        started = true;
        while (!quit.load()) std::this_thread::yield();
        saw_quit = true;
        return std::nullopt;
      },
      clock.now());
  while (!started) std::this_thread::yield();
  EXPECT_TRUE(w.join(10s));
  EXPECT_TRUE(saw_quit);
}

TEST(WorkerTest, AJobThatDoesNotReturnWithinTheGraceIsAbandoned) {
  FakeClock clock;
  auto gate = std::make_shared<CallCount>(CallCount::Gate::kClosed);
  auto w = std::make_unique<Worker>(
      clock,
      [gate](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
        gate->enter();
        return std::nullopt;
      },
      clock.now());
  ASSERT_TRUE(gate->waitFor(1));
  EXPECT_FALSE(w->join(10ms));
  EXPECT_FALSE(w->join(10s));  // the first answer stands
  w.reset();                   // no join: the thread is its own now
  gate->open();
}

TEST(MailboxTest, PostsComeBackInOrderAndMakeTheFdReadableUntilDrained) {
  auto box = Mailbox<int>::open();
  ASSERT_TRUE(box.ok()) << box.error().msg;
  auto readable = [&] {
    pollfd p{.fd = (*box)->fd(), .events = POLLIN, .revents = 0};
    return ::poll(&p, 1, 0) == 1;
  };
  EXPECT_FALSE(readable());
  std::thread t([&] {
    (*box)->post(1);
    (*box)->post(2);
  });
  t.join();
  EXPECT_TRUE(readable());
  EXPECT_EQ((*box)->drain(), (std::vector<int>{1, 2}));
  EXPECT_FALSE(readable());
  EXPECT_TRUE((*box)->drain().empty());
}

}  // namespace
}  // namespace rdmanet
