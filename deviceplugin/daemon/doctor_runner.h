#pragma once
// The node doctor inside the daemon (issue 7): runs every doctor check periodically on its own
// thread and keeps the last report's Prometheus text for /metrics.
//
// Threading: the daemon loop never waits for the doctor (a run reads a few hundred sysfs files
// and asks DCB per port, which can take long on a busy node); the runner has its own thread, at
// SCHED_IDLE priority (it only gets CPU time nothing else wants), and
// its own Netlink, opened on that thread in the daemon's (host) netns, since a netlink socket
// belongs to one netns and the daemon never setns's a shared thread. render() is thread-safe and
// never blocks on a run in progress: it returns the last finished run's text.
//
// Counter deltas are per interval: each run gets the previous run's counters as its baseline,
// so rdmanet_doctor_counter_delta is the growth since the previous run (absent after the first).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/base/result.h"
#include "common/net/netlink.h"
#include "deviceplugin/doctor/doctor.h"

namespace rdmanet::dp {

struct DoctorRunnerOptions {
  std::filesystem::path sysfs_root = "/";
  std::chrono::milliseconds interval{std::chrono::seconds(60)};  // > 0
  doctor::DoctorOptions doctor{};
  // The first run waits for release() (the daemon calls it once every pool is registered), or
  // for this long when nothing releases it (kubelet absent): the doctor never competes with
  // discovery and registration for the node's CPUs. Zero: run at once.
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
  // Starts the thread; the first run begins at once. The signal mask of the caller is inherited,
  // so start it after the daemon blocked its signals.
  DoctorRunner(DoctorRunnerOptions opts, NetlinkFactory netlink);
  ~DoctorRunner();  // stops and joins; a run in progress finishes first
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
  void loop();

  const DoctorRunnerOptions opts_;
  NetlinkFactory netlink_factory_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool released_ = false;
  bool holding_ = false;
  std::string text_;
  uint64_t runs_ = 0;
  std::thread thread_;  // last: starts after every other member exists
};

}  // namespace rdmanet::dp
