#pragma once
// eventually(): polls a condition that nothing notifies (another process, the kernel, a file, a
// server's counter behind a socket) until it holds or a deadline passes. Tests wait for events
// with it, never with a bare sleep: the sleep here only paces the polls, and the deadline bounds
// a wait that never ends. Where the test owns the time (a FakeClock), step the clock instead; where
// the code under test can notify, wait on that.

#include <chrono>
#include <functional>
#include <thread>

namespace rdmanet::testing {

// True once `done()` holds; false when `timeout` (real time) passed first.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10),
                       std::chrono::milliseconds every = std::chrono::milliseconds(5)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

}  // namespace rdmanet::testing
