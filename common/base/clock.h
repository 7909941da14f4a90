#pragma once
// Clock: the time seam. Timers, backoff and heartbeats read time through it, so tests drive them
// with a FakeClock (tests/fakes/fake_clock.h) instead of sleeping. Only monotonic time: nothing
// here is for timestamps that leave the process.

#include <chrono>
#include <condition_variable>
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
};

class SteadyClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace rdmanet
