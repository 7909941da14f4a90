#pragma once
// Clock: the time seam. Timers, backoff and heartbeats read time through it, so tests drive them
// with a FakeClock (tests/fakes/fake_clock.h) instead of sleeping. Only monotonic time: nothing
// here is for timestamps that leave the process.

#include <chrono>

namespace rdmanet {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;
  virtual ~Clock() = default;
  // Thread-safe.
  virtual time_point now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace rdmanet
