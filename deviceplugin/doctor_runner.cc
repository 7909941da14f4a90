#include "deviceplugin/doctor_runner.h"

#include <ctime>
#include <optional>

#include "common/base/sysfs.h"
#include "common/rdma/ibv_verbs.h"
#include "deviceplugin/doctor/render.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

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

void DoctorRunner::loop() {
  auto log = logger(Component::kDoctor);
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
    std::unique_lock lock(mu_);
    text_ = std::move(text);
    ++runs_;
    if (cv_.wait_for(lock, opts_.interval, [this] { return stop_; })) return;
  }
}

}  // namespace rdmanet::dp
