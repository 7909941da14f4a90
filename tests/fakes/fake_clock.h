#pragma once
// FakeClock: a Clock that moves only when a test says so. Thread-safe (the daemon's threads may
// read it while the test advances it).

#include <atomic>

#include "common/base/clock.h"

namespace rdmanet::testing {

class FakeClock final : public Clock {
 public:
  time_point now() const override { return time_point(duration(ticks_.load())); }
  void advance(duration d) { ticks_ += d.count(); }

 private:
  // Starts well past zero, so "now minus a backoff" is still a valid time point.
  std::atomic<duration::rep> ticks_{
      std::chrono::duration_cast<duration>(std::chrono::hours(1)).count()};
};

}  // namespace rdmanet::testing
