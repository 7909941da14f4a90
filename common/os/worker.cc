#include "common/os/worker.h"

#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

namespace rdmanet {

// What the thread shares with its owner: the thread holds it too, so an abandoned thread never
// touches a destroyed Worker.
struct Worker::Shared {
  Shared(const Clock& c, Job j, std::optional<Clock::time_point> first, OnError e)
      : clock(c), job(std::move(j)), on_error(std::move(e)), next(first) {}
  // One run of the job; a throw is reported and turns into a retry kRetryAfterThrow later.
  std::optional<Clock::time_point> runJob();
  const Clock& clock;
  const Job job;
  const OnError on_error;
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Clock::time_point> next;  // guarded by mu
  bool woken = false;                     // guarded by mu
  bool exited = false;                    // guarded by mu
  std::atomic<bool> quit{false};          // written under mu, so no wait misses it
};

Worker::Worker(const Clock& clock, Job job, std::optional<Clock::time_point> first_run,
               OnError on_error)
    : shared_(std::make_shared<Shared>(clock, std::move(job), first_run, std::move(on_error))),
      thread_([s = shared_] { run(*s); }) {}

Worker::~Worker() {
  if (joined_) return;
  requestStop();
  thread_.join();
}

std::optional<Clock::time_point> Worker::Shared::runJob() {
  std::string what;
  try {
    return job(quit);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception that is not a std::exception";
  }
  try {
    if (on_error) {
      on_error(what);
    } else {
      (void)std::fprintf(stderr, "rdmanet: a background job threw: %s\n", what.c_str());
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): a reporter that throws in turn must not end
                   // the thread either, and has no one left to report to
  }
  if (quit) return std::nullopt;  // the thread ends: no clock reads past this point
  return clock.now() + kRetryAfterThrow;
}

void Worker::run(Shared& s) {
  std::unique_lock lk(s.mu);
  // The flag is looked at before every wait: an abandoned thread must not touch the clock.
  while (!s.quit) {
    s.clock.waitUntil(s.cv, lk, s.next.value_or(Clock::time_point::max()),
                      [&s] { return s.quit.load() || s.woken; });
    if (s.quit) break;
    s.woken = false;
    lk.unlock();
    std::optional<Clock::time_point> next = s.runJob();
    lk.lock();
    s.next = next;
  }
  s.exited = true;
  s.cv.notify_all();
}

void Worker::wake() {
  {
    std::lock_guard lk(shared_->mu);
    shared_->woken = true;
  }
  shared_->cv.notify_all();
}

void Worker::requestStop() {
  {
    std::lock_guard lk(shared_->mu);
    shared_->quit = true;
  }
  shared_->cv.notify_all();
}

bool Worker::stopping() const { return shared_->quit.load(); }

bool Worker::join(std::chrono::milliseconds grace) {
  if (joined_) return *joined_;
  requestStop();
  bool exited;
  {
    std::unique_lock lk(shared_->mu);
    exited = shared_->cv.wait_for(lk, grace, [this] { return shared_->exited; });
  }
  if (exited) {
    thread_.join();
  } else {
    thread_.detach();
  }
  joined_ = exited;
  return exited;
}

}  // namespace rdmanet
