#pragma once
// VersionedState<T>: the latest value of something one thread replaces and others read, each
// value stamped with a version that grows by one per publish(), and a wait for a version newer
// than the one a reader has seen. Readers get immutable shared snapshots: a reader holding one
// never blocks the writer. Thread-safe.
//
// The waits take the clock they time out on: the injected Clock (a FakeClock in tests), or a
// plain real-time timeout for waits that only poll for cancellation. stop() ends every wait for
// good, for shutdown.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "common/base/clock.h"

namespace rdmanet {

template <typename T>
class VersionedState {
 public:
  struct Snapshot {
    uint64_t version = 0;
    std::shared_ptr<const T> value{};  // null from a wait that saw no newer version
  };

  explicit VersionedState(T initial = {}, uint64_t version = 0)
      : current_{version, std::make_shared<const T>(std::move(initial))} {}

  Snapshot current() const {
    std::lock_guard lk(mu_);
    return current_;
  }

  // Installs `value` as the next version, made by `stamp(value, version)` first when given (for
  // a T that carries its own version); wakes every waiter. Returns the new version.
  uint64_t publish(T value, const std::function<void(T&, uint64_t)>& stamp = {}) {
    uint64_t v;
    {
      std::lock_guard lk(mu_);
      v = current_.version + 1;
      if (stamp) stamp(value, v);
      current_ = {v, std::make_shared<const T>(std::move(value))};
    }
    cv_.notify_all();
    return v;
  }

  // Waits until the version is above `seen` (returns it), or until `until` on `clock`, stop(),
  // or `cancelled()` holds (returns a null value). `cancelled` is looked at when the waiter
  // wakes: whoever sets it calls kick(), or the caller bounds the wait to poll it.
  Snapshot waitNewer(uint64_t seen, const Clock& clock, Clock::time_point until,
                     const std::function<bool()>& cancelled = {}) const {
    std::unique_lock lk(mu_);
    auto done = [&] { return stopped_ || current_.version > seen || (cancelled && cancelled()); };
    clock.waitUntil(cv_, lk, until, done);
    if (stopped_ || current_.version <= seen || (cancelled && cancelled())) return {};
    return current_;
  }
  // The same over real time, for waits that are only slices of a poll for cancellation.
  Snapshot waitNewer(uint64_t seen, std::chrono::milliseconds timeout,
                     const std::atomic<bool>* cancel = nullptr) const {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, timeout,
                 [&] { return stopped_ || current_.version > seen || (cancel && cancel->load()); });
    if (stopped_ || current_.version <= seen || (cancel && cancel->load())) return {};
    return current_;
  }

  // Wakes every waiter so it looks at its cancel flag again (set before the call).
  void kick() const {
    // Through the mutex: a waiter between its look at the flag and its sleep holds it, so the
    // notify cannot fall in that gap and be lost.
    { std::lock_guard lk(mu_); }
    cv_.notify_all();
  }
  // Ends every wait, now and later.
  void stop() {
    {
      std::lock_guard lk(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
  }
  bool stopped() const {
    std::lock_guard lk(mu_);
    return stopped_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  Snapshot current_;
  bool stopped_ = false;
};

}  // namespace rdmanet
