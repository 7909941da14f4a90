#pragma once
// SteppingClock: a Clock whose timed waits end at once, moving its time on to their end, and
// which records how long each wait was. For code that waits on one thread where the waits are
// what a test checks (a retry schedule, a deadline cutting retries short): the test reads the
// schedule without waiting it out, and without a second thread to move a FakeClock.
// A wait without an end (time_point::max()) is a real wait for its condition. Thread-safe.

#include <chrono>
#include <mutex>
#include <vector>

#include "common/base/clock.h"

namespace rdmanet::testing {

class SteppingClock final : public Clock {
 public:
  time_point now() const override {
    std::lock_guard lk(mu_);
    return now_;
  }
  bool waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, time_point until,
                 const std::function<bool()>& woken) const override {
    if (woken()) return true;
    if (until == time_point::max()) return Clock::waitUntil(cv, lock, until, woken);
    {
      std::lock_guard lk(mu_);
      if (until > now_) {
        waits_.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(until - now_));
        now_ = until;
      }
    }
    return woken();
  }
  // Every timed wait so far, oldest first.
  std::vector<std::chrono::milliseconds> waits() const {
    std::lock_guard lk(mu_);
    return waits_;
  }

 private:
  mutable std::mutex mu_;
  // Starts well past zero, as FakeClock does.
  mutable time_point now_{std::chrono::hours(1)};
  mutable std::vector<std::chrono::milliseconds> waits_;
};

}  // namespace rdmanet::testing
