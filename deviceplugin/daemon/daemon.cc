#include "deviceplugin/daemon/daemon.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include "common/os/read_file.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kConfigDirMask =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB;
// ConfigMap updates and editors produce bursts of events: settle before reading.
constexpr auto kReloadDebounce = 100ms;
constexpr auto kRescanDebounce = 50ms;
// The loop turns at least this often when idle, so its heartbeat stays fresh.
constexpr auto kHeartbeatPeriod = 1s;

// The config file's text, or why it cannot be read (a ConfigMap's file: a symlink into its
// "..data" directory, swapped as a whole on update).
Result<std::string> readConfigText(const fs::path& p) {
  RDMANET_ASSIGN_OR_RETURN(auto text, readFile(p, kMaxConfigBytes, Symlink::kFollow));
  if (!text) return makeError(ErrorCode::kIoFailure, fmt::format("{} does not exist", p.string()));
  return std::move(*text);
}

}  // namespace

Daemon::Daemon(DaemonOptions opts, PluginConfig config, DaemonDeps deps)
    : opts_(std::move(opts)),
      deps_(std::move(deps)),
      sysfs_(opts_.sysfs_root, &refused_names_),
      core_(sysfs_, std::move(config),
            deps_.links ? VfTableReader([links = deps_.links.get()](const std::string& pf) {
              return links->vfLinkStates(pf);
            })
                        : VfTableReader()) {
  if (auto w = Wakeup::open(); w.ok()) stop_.emplace(std::move(w).value());
  beat();
}

Daemon::~Daemon() = default;

void Daemon::requestStop() {
  if (stop_) stop_->notify();
}

Clock::time_point Daemon::heartbeat() const {
  return TimePoint(Clock::duration(heartbeat_.load(std::memory_order_relaxed)));
}

void Daemon::beat() {
  heartbeat_.store(deps_.clock->now().time_since_epoch().count(), std::memory_order_relaxed);
}

Status Daemon::start() {
  auto log = logger(Component::kServer);
  if (!stop_) return makeError(ErrorCode::kIoFailure, "cannot create the stop eventfd");
  if (opts_.handle_signals) {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "signalfd");
    signal_fd_ = Fd(fd);
  }
  RDMANET_ASSIGN_OR_RETURN(Inotify in, Inotify::open());
  inotify_.emplace(std::move(in));
  if (!opts_.config_path.empty()) {
    auto text = readConfigText(opts_.config_path);
    config_text_ = text.ok() ? std::move(text).value() : "";
    auto wd = inotify_->watch(opts_.config_path.parent_path(), kConfigDirMask);
    if (wd.ok()) {
      config_wd_ = *wd;
    } else {
      logger(Component::kConfig)->warn("no hot reload: {}", wd.error().msg);
    }
  }
  if (opts_.uevents) {
    if (auto u = UeventSocket::open(); u.ok()) {
      uevents_.emplace(std::move(u).value());
    } else {
      logger(Component::kDiscovery)
          ->info("no uevents ({}); relying on netlink and resync", u.error().msg);
    }
  }
  if (deps_.links) {
    if (auto d = deps_.links->dump(); d.ok()) {
      for (const auto& u : *d) core_.setLink(u.name, {u.admin_up, u.carrier});
    } else {
      logger(Component::kHealth)->warn("link dump: {}", d.error().msg);
    }
  }
  RDMANET_RETURN_IF_ERROR(deps_.front->start());
  rescan();
  publish();
  resync_at_ = deps_.clock->now() + opts_.resync;
  log->info("{} front serving {} pools", deps_.front->name(), core_.config().pools.size());
  return okStatus();
}

Status Daemon::run() {
  RDMANET_RETURN_IF_ERROR(start());
  while (!stopping_)
    runOnce(std::chrono::duration_cast<std::chrono::milliseconds>(kHeartbeatPeriod));
  logger(Component::kServer)->info("stopping the {} front", deps_.front->name());
  deps_.front->stop();
  return okStatus();
}

Daemon::TimePoint Daemon::nextDeadline() const {
  TimePoint next = resync_at_;
  for (const auto& t : {reload_at_, rescan_at_, deps_.front->nextDeadline()}) {
    if (t) next = std::min(next, *t);
  }
  if (!recheck_at_.empty()) next = std::min(next, recheck_at_.front());
  if (auto t = lldp_table_.nextExpiry()) next = std::min(next, *t);
  return next;
}

void Daemon::runOnce(std::chrono::milliseconds max_wait) {
  std::vector<pollfd> fds;
  auto add = [&](int fd) {
    if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    return fd;
  };
  const int sig = add(signal_fd_.get()), stop = add(stop_->fd()), ino = add(inotify_->fd());
  const int links = add(deps_.links ? deps_.links->fd() : -1);
  const int uev = add(uevents_ ? uevents_->fd() : -1);
  const int lldp = add(deps_.lldp ? deps_.lldp->fd() : -1);
  const size_t own = fds.size();
  for (int fd : deps_.front->fds()) add(fd);

  auto wait =
      std::chrono::duration_cast<std::chrono::milliseconds>(nextDeadline() - deps_.clock->now());
  int timeout = static_cast<int>(std::clamp<int64_t>(wait.count() + 1, 0, max_wait.count()));
  int n = ::poll(fds.data(), fds.size(), timeout);
  if (n < 0 && errno != EINTR) {
    logger(Component::kServer)->error("poll: {}", strerror(errno));
    deps_.clock->sleepFor(std::chrono::milliseconds(100));  // not to spin on a poll that fails
  }
  beat();
  for (size_t i = 0; i < fds.size(); ++i) {
    const pollfd& p = fds[i];
    if (!(p.revents & (POLLIN | POLLERR | POLLHUP))) continue;
    if (i >= own) {
      deps_.front->onReadable(p.fd);
    } else if (p.fd == sig) {
      onSignals();
    } else if (p.fd == stop) {
      stopping_ = true;
    } else if (p.fd == ino) {
      std::vector<Inotify::Event> cfg_evs;
      for (auto& e : inotify_->drain()) {
        if (e.wd == config_wd_) cfg_evs.push_back(std::move(e));
      }
      if (!cfg_evs.empty()) onConfigDirEvents(cfg_evs);
    } else if (p.fd == links) {
      onLinkUpdates();
    } else if (p.fd == lldp) {
      onLldpFrames();
    } else if (p.fd == uev) {
      auto paths = uevents_->drainRelevant();
      if (!paths.empty()) {
        pending_devpaths_.insert(pending_devpaths_.end(), paths.begin(), paths.end());
        if (!rescan_at_) rescan_at_ = deps_.clock->now() + kRescanDebounce;
      }
    }
  }
  runTimers(deps_.clock->now());
  ready_.store(deps_.front->ready(), std::memory_order_relaxed);
  if (!ready_signalled_ && deps_.front->ready()) {
    ready_signalled_ = true;
    if (deps_.on_ready) deps_.on_ready();
  }
}

void Daemon::onSignals() {
  signalfd_siginfo si{};
  while (::read(signal_fd_.get(), &si, sizeof(si)) == sizeof(si)) {
    if (si.ssi_signo == SIGHUP) {
      logger(Component::kConfig)->info("SIGHUP: reloading config");
      reloadConfig(true);
    } else {
      stopping_ = true;
    }
  }
}

void Daemon::onConfigDirEvents(const std::vector<Inotify::Event>& evs) {
  std::string file = opts_.config_path.filename().string();
  for (const auto& e : evs) {
    // Kubernetes ConfigMap volumes swap a "..data" symlink; editors write temp files.
    if (e.name == file || e.name.starts_with("..")) {
      reload_at_ = deps_.clock->now() + kReloadDebounce;
      return;
    }
  }
}

void Daemon::onLinkUpdates() {
  auto log = logger(Component::kHealth);
  std::set<std::string> changed, pfs;
  bool need_rescan = false;
  for (const LinkUpdate& u : deps_.links->drain()) {
    if (u.deleted) {
      core_.eraseLink(u.name);
      if (core_.hasNetdev(u.name)) need_rescan = true;
      continue;
    }
    // A VF's link state set through its PF arrives as an update of the PF with its flags
    // unchanged: re-read the VF table on every PF update.
    if (core_.isPfNetdev(u.name)) pfs.insert(u.name);
    const bool known = core_.hasNetdev(u.name);
    if (!core_.setLink(u.name, {u.admin_up, u.carrier})) continue;
    if (known) {
      log->debug("{}: {}, carrier {}", u.name, u.admin_up ? "up" : "down",
                 u.carrier ? "on" : "off");
      changed.insert(u.name);
    } else if (sysfs_.exists("/sys/class/net/" + u.name + "/device")) {
      need_rescan = true;  // a new function's netdev (a VF just created)
    }
  }
  if (deps_.links->takeResync()) {
    if (auto d = deps_.links->dump(); d.ok()) {
      core_.clearLinks();
      for (const auto& u : *d) core_.setLink(u.name, {u.admin_up, u.carrier});
      need_rescan = true;
    }
  }
  if (need_rescan) {
    rescan();
  } else {
    if (!changed.empty()) core_.refreshPorts(changed);
    if (!pfs.empty()) core_.refreshVfTables(pfs);
  }
  if (!changed.empty()) {
    recheck_netdevs_.insert(changed.begin(), changed.end());
    auto now = deps_.clock->now();
    recheck_at_ = {now + 50ms, now + 250ms, now + 1s, now + 3s};
  }
  if (need_rescan || !changed.empty() || !pfs.empty()) publish();
}

void Daemon::runTimers(TimePoint now) {
  if (reload_at_ && *reload_at_ <= now) {
    reload_at_.reset();
    reloadConfig(false);
  }
  if (rescan_at_ && *rescan_at_ <= now) {
    rescan_at_.reset();
    // uevents name what changed: re-read only those PFs (a full scan when they cannot tell).
    if (pending_devpaths_.empty()) {
      rescan();
    } else if (!core_.rescanFor(pending_devpaths_)) {
      logger(Component::kDiscovery)
          ->debug("re-read the PFs of {} uevents", pending_devpaths_.size());
    }
    pending_devpaths_.clear();
    publish();
  }
  if (!recheck_at_.empty() && recheck_at_.front() <= now) {
    while (!recheck_at_.empty() && recheck_at_.front() <= now) {
      recheck_at_.erase(recheck_at_.begin());
    }
    core_.refreshPorts(recheck_netdevs_);
    publish();
    if (recheck_at_.empty()) recheck_netdevs_.clear();
  }
  if (lldp_table_.expire(now)) {
    logger(Component::kDiscovery)->info("an LLDP neighbour's TTL ran out");
    applyNeighbors();
  }
  if (resync_at_ <= now) {
    resync_at_ = now + opts_.resync;
    resync();
  }
  deps_.front->runTimers(now);
}

void Daemon::rescan() {
  const auto start = deps_.clock->now();
  core_.rescan();
  logger(Component::kDiscovery)
      ->debug("scanned {} NIC functions ({} with their netdev in a pod), {} GPUs in {} ms",
              core_.inventory().nics.size(), core_.movedCount(), core_.inventory().gpus.size(),
              std::chrono::duration_cast<std::chrono::milliseconds>(deps_.clock->now() - start)
                  .count());
}

void Daemon::resync() {
  const auto start = deps_.clock->now();
  std::string why;
  bool changed = core_.resync(&why);
  if (listenLldp(true)) changed = true;  // both run: the ports are re-joined on every resync
  logger(Component::kDiscovery)
      ->debug("resync of {} NIC functions: {} in {} ms", core_.inventory().nics.size(),
              changed ? why : std::string("unchanged"),
              std::chrono::duration_cast<std::chrono::milliseconds>(deps_.clock->now() - start)
                  .count());
  if (changed) publish();
}

void Daemon::publish() {
  auto log = logger(Component::kHealth);
  listenLldp(false);
  // Every change of neighbours or of the config (the rail rule) ends here.
  reportNeighbors();
  BuiltPools built = core_.build();
  for (const PoolHealthChange& c : built.changes) {
    // Shared slots would repeat the same line rdmaHcaMax times: log their PF once.
    const bool shared = c.change.id.find('-') != std::string::npos;
    if (shared && !c.change.id.ends_with("-0")) continue;
    if (c.change.healthy) {
      log->info("{}: {} is now Healthy", c.pool, c.change.id);
    } else {
      log->warn("{}: {} is now Unhealthy: {}", c.pool, c.change.id, c.change.reason);
    }
  }
  deps_.front->apply(core_.config(), built.pools);
}

void Daemon::reloadConfig(bool force) {
  auto log = logger(Component::kConfig);
  if (opts_.config_path.empty()) return;
  auto text = readConfigText(opts_.config_path);
  if (!text.ok()) {
    log->warn("{}; keeping the running config", text.error().msg);
    return;
  }
  if (!force && *text == config_text_) return;
  config_text_ = *text;
  auto cfg = parseConfig(*text);
  if (!cfg.ok()) {
    log->error("config reload rejected, keeping the running config: {}", cfg.error().msg);
    return;
  }
  log->info("config changed: applying {} pools", cfg->pools.size());
  core_.setConfig(std::move(cfg).value());
  publish();
}

}  // namespace rdmanet::dp
