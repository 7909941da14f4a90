#include "deviceplugin/daemon/doctor_runner.h"

#include <malloc.h>
#include <pthread.h>
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
    : state_(std::make_shared<State>()),
      thread_([st = state_, opts = std::move(opts), factory = std::move(netlink)] {
        loop(*st, opts, factory);
        {
          std::lock_guard lock(st->mu);
          st->exited = true;
        }
        st->cv.notify_all();
      }) {}

void DoctorRunner::requestStop() {
  if (stop_requested_) return;
  stop_requested_ = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->cancel = true;
  state_->cv.notify_all();
  // Back from SCHED_IDLE: on a busy node the run would otherwise get no CPU to notice the cancel.
  sched_param normal{};
  (void)pthread_setschedparam(thread_.native_handle(), SCHED_OTHER, &normal);
}

DoctorRunner::~DoctorRunner() {
  requestStop();
  std::unique_lock lock(state_->mu);
  if (state_->cv.wait_until(lock, *stop_requested_ + kStopGrace,
                            [this] { return state_->exited; })) {
    lock.unlock();
    thread_.join();
    return;
  }
  lock.unlock();
  logger(Component::kDoctor)
      ->warn("the doctor run in progress did not stop within {} ms: abandoning it",
             kStopGrace.count());
  thread_.detach();
}

std::string DoctorRunner::render() const {
  std::lock_guard lock(state_->mu);
  return state_->text;
}

uint64_t DoctorRunner::runs() const {
  std::lock_guard lock(state_->mu);
  return state_->runs;
}

bool DoctorRunner::holding() const {
  std::lock_guard lock(state_->mu);
  return state_->holding;
}

void DoctorRunner::release() {
  {
    std::lock_guard lock(state_->mu);
    state_->released = true;
  }
  state_->cv.notify_all();
}

void DoctorRunner::loop(State& st, const DoctorRunnerOptions& opts, const NetlinkFactory& factory) {
  auto log = logger(Component::kDoctor);
  // Linux applies this to the calling thread only: the daemon's other threads keep their
  // priority, and the doctor gets only CPU time they leave.
  sched_param idle{};
  if (sched_setscheduler(0, SCHED_IDLE, &idle) != 0) log->debug("SCHED_IDLE: {}", strerror(errno));
  {
    std::unique_lock lock(st.mu);
    if (opts.hold.count() > 0) {
      st.holding = true;
      st.cv.wait_for(lock, opts.hold, [&st] { return st.stop || st.released; });
      st.holding = false;
    }
    if (st.stop) return;
  }
  std::unique_ptr<Netlink> netlink;
  if (factory) {
    if (auto nl = factory(); nl.ok()) {
      netlink = std::move(nl).value();
    } else {
      log->warn("no netlink socket ({}): the DCB checks will say UNKNOWN", nl.error().msg);
    }
  }
  const Sysfs sysfs(opts.sysfs_root);
  // Pause and verbs read the real machine: only with the real sysfs root, so a simulated node's
  // run is not mixed with this host's devices. Null: pause UNKNOWN, RDMA facts from sysfs.
  std::unique_ptr<PauseReader> pause;
  std::unique_ptr<RdmaVerbs> verbs;
  if (opts.sysfs_root.lexically_normal() == "/") {
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
                           .options = opts.doctor,
                           .baseline = previous ? &*previous : nullptr,
                           .now_unix = static_cast<int64_t>(std::time(nullptr)),
                           .cancel = &st.cancel});
    if (st.cancel) return;  // an incomplete report: not for /metrics
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
        opts.interval, cpu * 100 / std::max(1, opts.max_cpu_percent));
    std::unique_lock lock(st.mu);
    st.text = std::move(text);
    ++st.runs;
    if (st.cv.wait_for(lock, pause, [&st] { return st.stop; })) return;
  }
}

}  // namespace rdmanet::dp
