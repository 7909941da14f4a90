#pragma once
// Deadline: the point in monotonic time by which a caller needs its answer, handed down from an
// RPC (kubelet's gRPC deadline) through every blocking step under it, so that no step outlives
// the caller. No deadline means no bound but the callee's own time-outs.
//
// A Deadline is a time point of the injected Clock and is only ever measured on it (a FakeClock in
// tests). At the gRPC boundary it becomes gRPC's own time span (deviceplugin/grpc_deadline.h).

#include <algorithm>
#include <chrono>
#include <optional>

#include "common/base/clock.h"

namespace rdmanet {

struct Deadline {
  using time_point = Clock::time_point;
  std::optional<time_point> at{};

  static Deadline in(Clock::duration d, const Clock& clock) { return {clock.now() + d}; }
  bool passed(const Clock& clock) const { return at && clock.now() >= *at; }
  // What is left of the deadline, at most `cap` (and `cap` without a deadline); 0 once passed.
  std::chrono::milliseconds left(std::chrono::milliseconds cap, const Clock& clock) const {
    if (!at) return cap;
    const auto rest = std::chrono::ceil<std::chrono::milliseconds>(*at - clock.now());
    return std::clamp(rest, std::chrono::milliseconds(0), cap);
  }
};

}  // namespace rdmanet
