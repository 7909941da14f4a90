#include "deviceplugin/daemon/doctor_runner.h"

#include <malloc.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <optional>

#include "common/base/sysfs.h"
#include "common/rdma/ibv_verbs.h"
#include "deviceplugin/doctor/render.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

// CPU time the calling thread has used so far.
std::chrono::milliseconds threadCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::milliseconds(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

}  // namespace

DoctorRunner::DoctorRunner(DoctorRunnerOptions opts, NetlinkFactory netlink)
    : opts_(std::move(opts)), netlink_factory_(std::move(netlink)), thread_([this] { loop(); }) {}

DoctorRunner::~DoctorRunner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string DoctorRunner::render() const {
  std::lock_guard lock(mu_);
  return text_;
}

uint64_t DoctorRunner::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

bool DoctorRunner::holding() const {
  std::lock_guard lock(mu_);
  return holding_;
}

void DoctorRunner::release() {
  {
    std::lock_guard lock(mu_);
    released_ = true;
  }
  cv_.notify_all();
}

void DoctorRunner::loop() {
  auto log = logger(Component::kDoctor);
  // Linux applies this to the calling thread only: the daemon's other threads keep their
  // priority, and the doctor gets only CPU time they leave.
  sched_param idle{};
  if (sched_setscheduler(0, SCHED_IDLE, &idle) != 0) log->debug("SCHED_IDLE: {}", strerror(errno));
  {
    std::unique_lock lock(mu_);
    if (opts_.hold.count() > 0) {
      holding_ = true;
      cv_.wait_for(lock, opts_.hold, [this] { return stop_ || released_; });
      holding_ = false;
    }
    if (stop_) return;
  }
  std::unique_ptr<Netlink> netlink;
  if (netlink_factory_) {
    if (auto nl = netlink_factory_(); nl.ok()) {
      netlink = std::move(nl).value();
    } else {
      log->warn("no netlink socket ({}): the DCB checks will say UNKNOWN", nl.error().msg);
    }
  }
  const Sysfs sysfs(opts_.sysfs_root);
  // Pause and verbs read the real machine: only with the real sysfs root, so a simulated node's
  // run is not mixed with this host's devices. Null: pause UNKNOWN, RDMA facts from sysfs.
  std::unique_ptr<PauseReader> pause;
  std::unique_ptr<RdmaVerbs> verbs;
  if (opts_.sysfs_root.lexically_normal() == "/") {
    if (auto p = EthtoolPauseReader::open(); p.ok()) {
      pause = std::move(p).value();
    } else {
      log->warn("no ethtool netlink ({}): the pause checks will say UNKNOWN", p.error().msg);
    }
    verbs = std::make_unique<IbvRdmaVerbs>();
  }
  std::optional<doctor::CounterSnapshot> previous;
  doctor::Verdict last_worst = doctor::Verdict::kPass;
  bool first = true;
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    const auto cpu_started = threadCpuTime();
    doctor::DoctorReport report =
        doctor::runDoctor({.sysfs = sysfs,
                           .netlink = netlink.get(),
                           .verbs = verbs.get(),
                           .pause = pause.get(),
                           .options = opts_.doctor,
                           .baseline = previous ? &*previous : nullptr,
                           .now_unix = static_cast<int64_t>(std::time(nullptr))});
    std::string text = doctor::renderPrometheus(report);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    // Info only when the node's overall verdict changes: a steady state logs nothing.
    const doctor::Verdict worst = report.worst();
    if (first || worst != last_worst) {
      log->info("node doctor: {} ({} checks, {} ms)", doctor::verdictName(worst),
                report.results.size(), took.count());
    } else {
      log->debug("node doctor: {} ({} checks, {} ms)", doctor::verdictName(worst),
                 report.results.size(), took.count());
    }
    first = false;
    last_worst = worst;
    previous = std::move(report.counters);
    // A run reads the whole node (GID tables included) on this thread, into this thread's malloc
    // arena, which glibc does not shrink by itself: hand the freed MBs back before sleeping.
    report = {};
    malloc_trim(0);
    // The cap counts the run's own CPU time, not its wall time: on a busy node a run takes
    // longer without costing more, and must not be pushed back for it.
    const auto cpu = threadCpuTime() - cpu_started;
    const auto pause = std::max<std::chrono::milliseconds>(
        opts_.interval, cpu * 100 / std::max(1, opts_.max_cpu_percent));
    std::unique_lock lock(mu_);
    text_ = std::move(text);
    ++runs_;
    if (cv_.wait_for(lock, pause, [this] { return stop_; })) return;
  }
}

}  // namespace rdmanet::dp
