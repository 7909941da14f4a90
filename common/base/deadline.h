#pragma once
// Deadline: the point in monotonic time by which a caller needs its answer, handed down from an
// RPC (kubelet's gRPC deadline) through every blocking step under it, so that no step outlives
// the caller. No deadline means no bound but the callee's own time-outs.
//
// Real time, not the injected Clock: it bounds real waits (a socket, a condition variable).

#include <algorithm>
#include <chrono>
#include <optional>

namespace rdmanet {

struct Deadline {
  using time_point = std::chrono::steady_clock::time_point;
  std::optional<time_point> at{};

  static Deadline in(std::chrono::steady_clock::duration d) {
    return {std::chrono::steady_clock::now() + d};
  }
  bool passed() const { return at && std::chrono::steady_clock::now() >= *at; }
  // What is left of the deadline, at most `cap` (and `cap` without a deadline); 0 once passed.
  std::chrono::milliseconds left(std::chrono::milliseconds cap) const {
    if (!at) return cap;
    const auto rest =
        std::chrono::ceil<std::chrono::milliseconds>(*at - std::chrono::steady_clock::now());
    return std::clamp(rest, std::chrono::milliseconds(0), cap);
  }
};

}  // namespace rdmanet
