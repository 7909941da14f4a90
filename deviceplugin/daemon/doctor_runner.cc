#include "deviceplugin/daemon/doctor_runner.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <optional>

#include "common/base/clock.h"
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

// The runs, on the worker's thread. Made on the owner's thread; everything past the constructor
// (the netlink socket, the readers, the counter baseline) belongs to the worker's thread.
class DoctorRunner::Job {
 public:
  Job(std::shared_ptr<State> state, DoctorRunnerOptions opts, NetlinkFactory factory,
      const Clock& clock)
      : state_(std::move(state)),
        opts_(std::move(opts)),
        factory_(std::move(factory)),
        clock_(clock),
        sysfs_(opts_.sysfs_root) {}

  // One run; returns when the next is due.
  std::optional<Clock::time_point> operator()(const std::atomic<bool>& quit) {
    {
      std::lock_guard lock(state_->mu);
      state_->holding = false;
    }
    if (!set_up_) setUp();
    if (quit) return std::nullopt;
    const auto started = clock_.now();
    const auto cpu_started = threadCpuTime();
    doctor::DoctorReport report = doctor::runDoctor({.sysfs = sysfs_,
                                                     .netlink = netlink_.get(),
                                                     .verbs = verbs_.get(),
                                                     .pause = pause_.get(),
                                                     .options = opts_.doctor,
                                                     .baseline = previous_ ? &*previous_ : nullptr,
                                                     .now_unix = wallSeconds(),
                                                     .cancel = &quit});
    // An incomplete report is not for /metrics; and an abandoned thread reads no clock.
    if (quit) return std::nullopt;
    std::string text = doctor::renderPrometheus(report);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - started);
    // Info only when the node's overall verdict changes: a steady state logs nothing.
    const doctor::Verdict worst = report.worst();
    auto log = logger(Component::kDoctor);
    log->log(first_ || worst != last_worst_ ? spdlog::level::info : spdlog::level::debug,
             "node doctor: {} ({} checks, {} ms)", doctor::verdictName(worst),
             report.results.size(), took.count());
    first_ = false;
    last_worst_ = worst;
    previous_ = std::move(report.counters);
    // A run reads the whole node (GID tables included) on this thread, into this thread's malloc
    // arena, which glibc does not shrink by itself: hand the freed MBs back before sleeping.
    report = {};
    malloc_trim(0);
    // The cap counts the run's own CPU time, not its wall time: on a busy node a run takes
    // longer without costing more, and must not be pushed back for it.
    const auto cpu = threadCpuTime() - cpu_started;
    const auto pause = std::max<std::chrono::milliseconds>(
        opts_.interval, cpu * 100 / std::max(1, opts_.max_cpu_percent));
    {
      std::lock_guard lock(state_->mu);
      state_->text = std::move(text);
      ++state_->runs;
    }
    return clock_.now() + pause;
  }

 private:
  // Before the first run, on the worker's thread: the priority and the sockets are per thread.
  void setUp() {
    set_up_ = true;
    auto log = logger(Component::kDoctor);
    // Linux applies this to the calling thread only: the daemon's other threads keep their
    // priority, and the doctor gets only CPU time they leave.
    sched_param idle{};
    if (sched_setscheduler(0, SCHED_IDLE, &idle) != 0) {
      log->debug("SCHED_IDLE: {}", strerror(errno));
    }
    if (factory_) {
      if (auto nl = factory_(); nl.ok()) {
        netlink_ = std::move(nl).value();
      } else {
        log->warn("no netlink socket ({}): the DCB checks will say UNKNOWN", nl.error().msg);
      }
    }
    // Pause and verbs read the real machine: only with the real sysfs root, so a simulated node's
    // run is not mixed with this host's devices. Null: pause UNKNOWN, RDMA facts from sysfs.
    if (opts_.sysfs_root.lexically_normal() == "/") {
      if (auto p = EthtoolPauseReader::open(); p.ok()) {
        pause_ = std::move(p).value();
      } else {
        log->warn("no ethtool netlink ({}): the pause checks will say UNKNOWN", p.error().msg);
      }
      verbs_ = std::make_unique<IbvRdmaVerbs>();
    }
  }

  const std::shared_ptr<State> state_;
  const DoctorRunnerOptions opts_;
  const NetlinkFactory factory_;
  const Clock& clock_;
  const Sysfs sysfs_;
  bool set_up_ = false;
  std::unique_ptr<Netlink> netlink_;
  std::unique_ptr<PauseReader> pause_;
  std::unique_ptr<RdmaVerbs> verbs_;
  std::optional<doctor::CounterSnapshot> previous_;
  doctor::Verdict last_worst_ = doctor::Verdict::kPass;
  bool first_ = true;
};

namespace {

// The first run's time: after the hold, or at once.
Clock::time_point firstRun(const DoctorRunnerOptions& opts, const Clock& clock) {
  return clock.now() + std::max(opts.hold, std::chrono::milliseconds(0));
}

}  // namespace

DoctorRunner::DoctorRunner(DoctorRunnerOptions opts, NetlinkFactory netlink, const Clock& clock)
    : clock_(clock),
      state_([&opts] {
        // Set before the thread starts: holding() is true from the start when there is a hold.
        auto st = std::make_shared<State>();
        st->holding = opts.hold.count() > 0;
        return st;
      }()),
      worker_(
          clock,
          [job = std::make_shared<Job>(state_, opts, std::move(netlink), clock)](
              const std::atomic<bool>& quit) { return (*job)(quit); },
          firstRun(opts, clock),
          [](std::string_view what) {
            logger(Component::kDoctor)->error("the periodic doctor threw: {}", what);
          }) {}

void DoctorRunner::requestStop() {
  if (stop_requested_) return;
  stop_requested_ = clock_.now();
  worker_.requestStop();  // also the run's cancel flag
  // Back from SCHED_IDLE: on a busy node the run would otherwise get no CPU to notice the cancel.
  sched_param normal{};
  (void)pthread_setschedparam(worker_.nativeHandle(), SCHED_OTHER, &normal);
}

DoctorRunner::~DoctorRunner() {
  requestStop();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      *stop_requested_ + kStopGrace - clock_.now());
  if (worker_.join(std::max(left, std::chrono::milliseconds(0)))) return;
  logger(Component::kDoctor)
      ->warn("the doctor run in progress did not stop within {} ms: abandoning it",
             kStopGrace.count());
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
  // Only a runner still holding is woken: a release after the first run must not add a run.
  std::lock_guard lock(state_->mu);
  if (state_->holding) worker_.wake();
}

}  // namespace rdmanet::dp
