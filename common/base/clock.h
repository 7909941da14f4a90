#pragma once
// Clock: the time seam. Timers, deadlines, time-outs, backoff, heartbeats and the durations the
// daemon measures read time through it, so tests drive them with a FakeClock
// (tests/fakes/fake_clock.h) instead of sleeping. Monotonic time only; wallNow() below is the wall
// time for timestamps that leave the process.
//
// This file is the real clock: the one place production code reads steady_clock or system_clock
// (lint.one_clock refuses them, and every sleep, anywhere else).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace rdmanet {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;
  virtual ~Clock() = default;
  // Thread-safe.
  virtual time_point now() const = 0;
  // For a worker thread that sleeps on this clock: blocks on `cv` (`lock` holds its mutex) until
  // `woken()` holds or now() reaches `until` (time_point::max(): never), and returns woken()'s
  // last value. Whoever makes woken() true notifies `cv` as usual. Thread-safe.
  virtual bool waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         time_point until, const std::function<bool()>& woken) const {
    if (until == time_point::max()) {
      cv.wait(lock, woken);
      return true;
    }
    return cv.wait_until(lock, until, woken);
  }
  // Waits `d` on this clock with nothing to wake it: for a pause between retries of something
  // that cannot notify (a lock another process holds, a failed poll(2)). Thread-safe.
  void sleepFor(duration d) const {
    std::mutex mu;
    std::condition_variable never;
    std::unique_lock lock(mu);
    (void)waitUntil(never, lock, now() + d, [] { return false; });
  }
};

class SteadyClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
};

// Wall time, for timestamps that leave the process (log lines, Events, status conditions, the
// checkpoint's). Never for a deadline or a time-out: those are on Clock.
inline std::chrono::system_clock::time_point wallNow() { return std::chrono::system_clock::now(); }
// The same in whole seconds since the Unix epoch.
inline int64_t wallSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(wallNow().time_since_epoch()).count();
}

}  // namespace rdmanet
