#pragma once
// Worker: one thread that runs a job when woken, or when the time the job asked for comes on the
// injected clock, until it is told to stop. The daemon's background work (kubelet registration,
// the ResourceSlice publisher, the node doctor) runs on it, so that each has the same wake-up,
// the same prompt stop and the same timed wait, which a FakeClock drives in tests.
//
// - The job runs on the worker's thread, one run at a time. It returns when to run again
//   without a wake() (nullopt: only on a wake()). It gets the quit flag: a long job looks at it
//   between steps and returns early once it is set.
// - wake() from any thread: the job runs (again) as soon as the run in progress, if any, ends.
//   Wakes during a run fold into one more run, so a job takes all pending work each time.
// - requestStop() sets the quit flag and ends a wait at once; it never waits for the thread.
//   join(grace) waits for the thread, for at most `grace` of real time: it bounds the process's
//   exit, which a FakeClock does not move. A thread still running then is abandoned (detached).
//   Everything it uses must then be its own: the job and what it captures are kept alive by the
//   thread, and once the quit flag is set the thread no longer reads the clock.
// - A job that throws does not end the thread, nor the process: the exception is caught, handed
//   to the worker's `on_error` (its what(); stderr when there is none), and the job runs again
//   kRetryAfterThrow later on the clock, or at the next wake(). One bad input (a name a tenant
//   chose, an attribute that does not parse) then costs a log line per retry, not a crash-loop
//   of the whole daemon.
// - The destructor stops the worker and waits for the thread without bound, unless join() or
//   abandonment already ended it.
//
// Thread-safe, except join() and the destructor, which belong to the owner's thread.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

#include "common/base/clock.h"

namespace rdmanet {

class Worker {
 public:
  using Job = std::function<std::optional<Clock::time_point>(const std::atomic<bool>& quit)>;
  // Told what a throwing run threw, on the worker's thread. Like the job, it must not use
  // anything an abandoned thread could outlive.
  using OnError = std::function<void(std::string_view what)>;
  static constexpr std::chrono::seconds kRetryAfterThrow{1};

  // Starts the thread. The first run comes with the first wake(), or at `first_run` on `clock`
  // if that is sooner. `clock` must outlive the thread's last wait (see above).
  Worker(const Clock& clock, Job job, std::optional<Clock::time_point> first_run = std::nullopt,
         OnError on_error = {});
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void wake();
  void requestStop();
  // Whether requestStop() was called.
  bool stopping() const;
  // requestStop(), then waits up to `grace` for the thread to end. True when it ended (joined);
  // false when it was abandoned. Idempotent: later calls return the first answer.
  bool join(std::chrono::milliseconds grace);
  // The thread, e.g. to change its scheduling priority; valid until join().
  std::thread::native_handle_type nativeHandle() { return thread_.native_handle(); }

 private:
  struct Shared;
  static void run(Shared& s);

  std::shared_ptr<Shared> shared_;
  std::optional<bool> joined_;  // join()'s answer, once it gave one
  std::thread thread_;          // last: starts after every other member exists
};

}  // namespace rdmanet
