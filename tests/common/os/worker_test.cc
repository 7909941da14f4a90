// Worker and Mailbox: the one background thread and post-back queue the daemon's workers share.
// Time is a FakeClock: runs at a time the job asked for happen when the test advances the clock
// past it, never before.
#include "common/os/worker.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/os/mailbox.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

// Counts runs and lets the test wait for a count (the job runs on the worker's thread).
class Runs {
 public:
  void add() {
    {
      std::lock_guard lk(mu_);
      ++count_;
    }
    cv_.notify_all();
  }
  bool waitFor(int n) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, 10s, [&] { return count_ >= n; });
  }
  int count() {
    std::lock_guard lk(mu_);
    return count_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

// A job that counts its runs and asks to run again `period` after each (none: only when woken).
Worker::Job counting(Runs& runs, const FakeClock& clock,
                     std::optional<Clock::duration> period = std::nullopt) {
  return [&runs, &clock, period](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
    runs.add();
    if (!period) return std::nullopt;
    return clock.now() + *period;
  };
}

// Exactly `n` runs, once the worker is back asleep on the clock.
bool settledAt(Runs& runs, const FakeClock& clock, int n) {
  return runs.waitFor(n) && clock.waitIdle() && runs.count() == n;
}

TEST(WorkerTest, RunsOnlyWhenWoken) {
  FakeClock clock;
  Runs runs;
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
  Runs runs;
  Worker w(clock, counting(runs, clock, 5s), clock.now());  // the first run at once
  ASSERT_TRUE(settledAt(runs, clock, 1));
  clock.advance(4999ms);
  EXPECT_TRUE(settledAt(runs, clock, 1));
  clock.advance(1ms);
  EXPECT_TRUE(settledAt(runs, clock, 2));
}

TEST(WorkerTest, AWakeBeforeTheTimerRunsTheJobAtOnce) {
  FakeClock clock;
  Runs runs;
  Worker w(clock, counting(runs, clock), clock.now() + 1h);
  ASSERT_TRUE(clock.waitIdle());
  w.wake();
  ASSERT_TRUE(runs.waitFor(1));
}

TEST(WorkerTest, WakesDuringARunFoldIntoOneMoreRun) {
  FakeClock clock;
  Runs runs;
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool in_run = false, open = false;
  Worker w(clock, [&](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
    std::unique_lock lk(gate_mu);
    in_run = true;
    gate_cv.notify_all();
    gate_cv.wait(lk, [&] { return open; });
    runs.add();
    return std::nullopt;
  });
  w.wake();
  {
    std::unique_lock lk(gate_mu);
    ASSERT_TRUE(gate_cv.wait_for(lk, 10s, [&] { return in_run; }));
  }
  for (int i = 0; i < 3; ++i) w.wake();
  {
    std::lock_guard lk(gate_mu);
    open = true;
  }
  gate_cv.notify_all();
  EXPECT_TRUE(settledAt(runs, clock, 2));
}

// A throwing job (a name a tenant chose that a JSON encoder refused, say) once ended the thread
// with std::terminate, and so the daemon: now the exception is reported, and the job runs again
// kRetryAfterThrow later on the clock, and on the next wake.
TEST(WorkerTest, AJobThatThrowsIsReportedAndRunsAgainLater) {
  FakeClock clock;
  Runs runs;
  std::mutex mu;
  std::vector<std::string> reported;
  Worker w(
      clock,
      [&](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
        runs.add();
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
  Runs runs;
  Worker w(clock, [&](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
    runs.add();
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
  Runs runs;
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
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool entered = false, open = false;
  };
  auto gate = std::make_shared<Gate>();
  auto w = std::make_unique<Worker>(
      clock,
      [gate](const std::atomic<bool>&) -> std::optional<Clock::time_point> {
        std::unique_lock lk(gate->mu);
        gate->entered = true;
        gate->cv.notify_all();
        gate->cv.wait(lk, [&] { return gate->open; });
        return std::nullopt;
      },
      clock.now());
  {
    std::unique_lock lk(gate->mu);
    ASSERT_TRUE(gate->cv.wait_for(lk, 10s, [&] { return gate->entered; }));
  }
  EXPECT_FALSE(w->join(10ms));
  EXPECT_FALSE(w->join(10s));  // the first answer stands
  w.reset();                   // no join: the thread is its own now
  {
    std::lock_guard lk(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
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
