#pragma once
// CallCount: counts calls made on other threads (a worker's job, an HTTP handler) and lets the
// test wait for a count instead of sleeping. Made closed, it is also a gate: each call waits in
// enter() until the test calls open(), so the test can hold a call in progress.

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace rdmanet::testing {

class CallCount {
 public:
  enum class Gate { kOpen, kClosed };
  explicit CallCount(Gate gate = Gate::kOpen) : open_(gate == Gate::kOpen) {}

  // Counts one call, then waits until the gate is open (at once when it is).
  void enter() {
    std::unique_lock lk(mu_);
    ++count_;
    cv_.notify_all();
    cv_.wait(lk, [this] { return open_; });
  }
  void open() {
    {
      std::lock_guard lk(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Whether `n` calls were counted within `timeout`.
  bool waitFor(int n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, timeout, [&] { return count_ >= n; });
  }
  int count() {
    std::lock_guard lk(mu_);
    return count_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
  bool open_ = true;
};

}  // namespace rdmanet::testing
