#pragma once
// The node doctor inside the daemon (issue 7): runs every doctor check periodically on its own
// thread and keeps the last report's Prometheus text for /metrics.
//
// Threading: the daemon loop never waits for the doctor (a run reads a few hundred sysfs files
// and asks DCB per port, which can take long on a busy node); the runner has its own thread (a
// Worker, common/os/worker.h, whose waits read the injected clock), at SCHED_IDLE priority (it only
// gets CPU time nothing else wants), and its own Netlink, opened on that thread in the daemon's
// (host) netns, since a netlink socket belongs to one netns and the daemon never setns's a shared
// thread. render() is thread-safe and never blocks on a run in progress: it returns the last
// finished run's text.
//
// Stopping is bounded (the daemon must exit within seconds of SIGTERM): the destructor cancels
// the run in progress, which ends at its next check, and first puts the thread back to normal
// priority, since a run at SCHED_IDLE on a busy node gets no CPU to get there (such a run once
// held up the daemon's exit by 7.6 s). A run stuck longer than kStopGrace (a read that blocks)
// is abandoned: the thread is detached and owns everything it touches. That grace is real time.
//
// Counter deltas are per interval: each run gets the previous run's counters as its baseline,
// so rdmanet_doctor_counter_delta is the growth since the previous run (absent after the first).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/base/clock.h"
#include "common/base/result.h"
#include "common/net/netlink.h"
#include "common/os/worker.h"
#include "deviceplugin/doctor/doctor.h"

namespace rdmanet::dp {

struct DoctorRunnerOptions {
  std::filesystem::path sysfs_root = "/";
  std::chrono::milliseconds interval{std::chrono::seconds(60)};  // > 0
  doctor::DoctorOptions doctor{};
  // The first run waits for release() (the daemon calls it once every pool is registered), or
  // for this long on the clock when nothing releases it (kubelet absent): the doctor never competes
  // with discovery and registration for the node's CPUs. Zero: run at once.
  std::chrono::milliseconds hold{0};
  // Bounded cost: after a run that used T of CPU time, the next starts no sooner than
  // T * 100 / this, so the doctor never takes more than this share of one core, however large
  // the node.
  int max_cpu_percent = 5;
};

// Called once, on the runner's thread. An error makes the DCB checks UNKNOWN (logged once).
using NetlinkFactory = std::function<Result<std::unique_ptr<Netlink>>()>;

class DoctorRunner {
 public:
  // How long the destructor waits for a cancelled run before abandoning it.
  static constexpr std::chrono::milliseconds kStopGrace{1000};

  // Starts the thread; the first run begins at once (or after the hold). The signal mask of the
  // caller is inherited, so start it after the daemon blocked its signals. `netlink` is called on
  // the runner's thread and may outlive the runner (see above). `clock` times the hold and the
  // interval; it must outlive the runner.
  DoctorRunner(DoctorRunnerOptions opts, NetlinkFactory netlink, const Clock& clock);
  ~DoctorRunner();  // requestStop(), then waits for the thread until kStopGrace after the request

  // Cancels a run in progress and ends the thread, without waiting: shutdown calls it first, so
  // that the grace period runs while the rest of the daemon stops. Idempotent, thread-safe.
  void requestStop();
  DoctorRunner(const DoctorRunner&) = delete;
  DoctorRunner& operator=(const DoctorRunner&) = delete;

  // The last finished run as Prometheus text (doctor/render.h renderPrometheus), "" before the
  // first run finished.
  std::string render() const;
  // Finished runs so far.
  uint64_t runs() const;
  // Lets the first run start (see DoctorRunnerOptions::hold). Idempotent, thread-safe.
  void release();
  // Whether the runner is waiting for release() now.
  bool holding() const;

 private:
  // What the thread shares with the runner: the job holds it too, so an abandoned thread never
  // touches a destroyed runner.
  struct State {
    mutable std::mutex mu;
    bool holding = false;
    std::string text;
    uint64_t runs = 0;
  };
  class Job;  // the runs themselves, on the worker's thread (doctor_runner.cc)

  const Clock& clock_;
  std::shared_ptr<State> state_;
  std::optional<Clock::time_point> stop_requested_;  // owner's thread only
  Worker worker_;                                    // last: starts after every other member exists
};

}  // namespace rdmanet::dp
