#pragma once
// FakeClock: a Clock that moves only when a test says so. Thread-safe (the daemon's threads may
// read it while the test advances it).
//
// Threads that sleep on it (waitUntil) wake when the test advances it past their time. idle()
// tells a test that every such thread has gone back to sleep for a time still ahead, so what
// the last advance() set off is done: advance, wait for idle(), check, advance again. That keeps
// tests of backoff and resync deterministic without sleeping.

#include <atomic>
#include <map>
#include <thread>

#include "common/base/clock.h"

namespace rdmanet::testing {

class FakeClock final : public Clock {
 public:
  time_point now() const override { return time_point(duration(ticks_.load())); }
  void advance(duration d) { ticks_ += d.count(); }

  bool waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, time_point until,
                 const std::function<bool()>& woken) const override {
    const int id = enter(until);
    // The fake cannot notify `cv` under its owner's mutex, so it looks at its time every
    // millisecond of real time; the owner's notify still wakes the waiter at once.
    while (!woken() && now() < until) cv.wait_for(lock, std::chrono::milliseconds(1));
    leave(id);
    return woken();
  }

  // Waits (real time, polling, at most `timeout`) until idle(threads): what the last advance()
  // set off is done. False when it never got there.
  bool waitIdle(int threads = 1,
                std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!idle(threads)) {
      if (std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::yield();
    }
    return true;
  }

  // True when at least `threads` threads sleep in waitUntil() and each until a time still
  // ahead of now().
  bool idle(int threads = 1) const {
    std::lock_guard lk(mu_);
    if (static_cast<int>(waiters_.size()) < threads) return false;
    for (const auto& [id, until] : waiters_) {
      if (until <= now()) return false;
    }
    return true;
  }

 private:
  int enter(time_point until) const {
    std::lock_guard lk(mu_);
    waiters_[++last_id_] = until;
    return last_id_;
  }
  void leave(int id) const {
    std::lock_guard lk(mu_);
    waiters_.erase(id);
  }

  // Starts well past zero, so "now minus a backoff" is still a valid time point.
  std::atomic<duration::rep> ticks_{
      std::chrono::duration_cast<duration>(std::chrono::hours(1)).count()};
  mutable std::mutex mu_;
  mutable std::map<int, time_point> waiters_;  // waitUntil() callers: id -> their time
  mutable int last_id_ = 0;
};

}  // namespace rdmanet::testing
