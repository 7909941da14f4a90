#include "deviceplugin/daemon.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kSocketDirMask =
    IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kConfigDirMask =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB;
// ConfigMap updates and editors produce bursts of events: settle before reading.
constexpr auto kReloadDebounce = 100ms;
constexpr auto kRescanDebounce = 50ms;

std::optional<std::string> readFile(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Daemon::Daemon(DaemonOptions opts, PluginConfig config, DaemonDeps deps)
    : opts_(std::move(opts)),
      config_(std::move(config)),
      deps_(std::move(deps)),
      sysfs_(opts_.sysfs_root) {
  if (auto w = Wakeup::open(); w.ok()) stop_.emplace(std::move(w).value());
}

Daemon::~Daemon() {
  for (auto& [name, rt] : pools_) {
    if (rt.endpoint) rt.endpoint->stop();
  }
}

void Daemon::requestStop() {
  if (stop_) stop_->notify();
}

fs::path Daemon::socketDir() const { return opts_.kubelet_dir / "device-plugins"; }

Status Daemon::setUp() {
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
  std::error_code ec;
  fs::create_directories(socketDir(), ec);  // kubelet creates it; be there first if need be
  watchSocketDir();
  if (!opts_.config_path.empty()) {
    config_text_ = readFile(opts_.config_path).value_or("");
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
  RDMANET_ASSIGN_OR_RETURN(
      worker_, RegistrationWorker::start(*deps_.registrar, socketDir() / kKubeletSocket));
  if (deps_.links) {
    if (auto d = deps_.links->dump(); d.ok()) {
      for (const auto& u : *d) netlink_carrier_[u.name] = u.carrier;
    } else {
      logger(Component::kHealth)->warn("link dump: {}", d.error().msg);
    }
  }
  rescan();
  for (Pool& p : buildPools(config_, inv_, &moved_)) startPool(std::move(p));
  rebuild();
  resync_at_ = Clock::now() + opts_.resync;
  log->info("serving {} pools; kubelet dir {}", pools_.size(), socketDir().string());
  return okStatus();
}

void Daemon::watchSocketDir() {
  auto wd = inotify_->watch(socketDir(), kSocketDirMask);
  if (wd.ok()) {
    socket_wd_ = *wd;
    rewatch_at_.reset();
  } else {
    socket_wd_ = -1;
    rewatch_at_ = Clock::now() + 500ms;
  }
}

Status Daemon::run() {
  RDMANET_RETURN_IF_ERROR(setUp());
  while (!stopping_) loopOnce();
  logger(Component::kServer)->info("stopping: removing {} endpoints", pools_.size());
  for (auto& [name, rt] : pools_) {
    if (rt.endpoint) rt.endpoint->stop();
    rt.endpoint.reset();
  }
  worker_.reset();
  return okStatus();
}

void Daemon::loopOnce() {
  std::vector<pollfd> fds;
  auto add = [&](int fd) {
    if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    return fd;
  };
  const int sig = add(signal_fd_.get()), stop = add(stop_->fd()), ino = add(inotify_->fd());
  const int links = add(deps_.links ? deps_.links->fd() : -1);
  const int uev = add(uevents_ ? uevents_->fd() : -1);
  const int reg = add(worker_->fd());

  Clock::time_point next = resync_at_;
  for (const auto& t : {reload_at_, rescan_at_, rewatch_at_}) {
    if (t) next = std::min(next, *t);
  }
  if (!recheck_at_.empty()) next = std::min(next, recheck_at_.front());
  for (const auto& [_, rt] : pools_) {
    if (rt.register_at && !rt.in_flight) next = std::min(next, *rt.register_at);
  }
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
  int timeout = static_cast<int>(std::clamp<int64_t>(wait.count() + 1, 0, 60000));
  int n = ::poll(fds.data(), fds.size(), timeout);
  if (n < 0 && errno != EINTR) {
    logger(Component::kServer)->error("poll: {}", strerror(errno));
    ::usleep(100000);
  }
  for (const pollfd& p : fds) {
    if (!(p.revents & (POLLIN | POLLERR | POLLHUP))) continue;
    if (p.fd == sig) {
      signalfd_siginfo si{};
      while (::read(sig, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
          logger(Component::kConfig)->info("SIGHUP: reloading config");
          reloadConfig(true);
        } else {
          stopping_ = true;
        }
      }
    } else if (p.fd == stop) {
      stopping_ = true;
    } else if (p.fd == ino) {
      std::vector<Inotify::Event> sock_evs, cfg_evs;
      for (auto& e : inotify_->drain()) {
        if (e.wd == socket_wd_) sock_evs.push_back(std::move(e));
        if (e.wd == config_wd_) cfg_evs.push_back(std::move(e));
      }
      if (!sock_evs.empty()) onSocketDirEvents(sock_evs);
      if (!cfg_evs.empty()) onConfigDirEvents(cfg_evs);
    } else if (p.fd == links) {
      onLinkUpdates();
    } else if (p.fd == uev) {
      if (uevents_->drainRelevant() && !rescan_at_) rescan_at_ = Clock::now() + kRescanDebounce;
    } else if (p.fd == reg) {
      onRegistrations();
    }
  }
  runTimers();
}

void Daemon::onSocketDirEvents(const std::vector<Inotify::Event>& evs) {
  auto log = logger(Component::kKubelet);
  for (const auto& e : evs) {
    if (e.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
      log->warn("{} vanished; waiting for it to come back", socketDir().string());
      socket_wd_ = -1;
      kubeletVanished();
      rewatch_at_ = Clock::now() + 500ms;
      return;
    }
    bool created = e.mask & (IN_CREATE | IN_MOVED_TO);
    if (e.name == kKubeletSocket) {
      if (created) {
        log->info("kubelet.sock appeared: registering all pools");
        kubeletAppeared();
      } else {
        log->info("kubelet.sock removed: kubelet is restarting or gone");
        kubeletVanished();
      }
      continue;
    }
    if (created) continue;
    std::error_code ec;
    if (fs::exists(socketDir() / e.name, ec)) continue;  // we re-created it already
    for (auto& [name, rt] : pools_) {
      if (rt.socket_name == e.name && rt.endpoint) {
        log->info("{}: socket {} was removed (kubelet restart?): serving it again", name, e.name);
        restartEndpoint(rt, name);
      }
    }
  }
}

void Daemon::onConfigDirEvents(const std::vector<Inotify::Event>& evs) {
  std::string file = opts_.config_path.filename().string();
  for (const auto& e : evs) {
    // Kubernetes ConfigMap volumes swap a "..data" symlink; editors write temp files.
    if (e.name == file || e.name.starts_with("..")) {
      reload_at_ = Clock::now() + kReloadDebounce;
      return;
    }
  }
}

void Daemon::onLinkUpdates() {
  auto log = logger(Component::kHealth);
  std::set<std::string> changed;
  bool need_rescan = false;
  for (const LinkUpdate& u : deps_.links->drain()) {
    if (u.deleted) {
      netlink_carrier_.erase(u.name);
      if (inventoryHasNetdev(u.name)) need_rescan = true;
      continue;
    }
    auto it = netlink_carrier_.find(u.name);
    bool is_new = it == netlink_carrier_.end();
    if (!is_new && it->second == u.carrier) continue;
    netlink_carrier_[u.name] = u.carrier;
    if (inventoryHasNetdev(u.name)) {
      log->debug("{}: carrier {}", u.name, u.carrier ? "up" : "down");
      changed.insert(u.name);
    } else if (is_new && sysfs_.exists("/sys/class/net/" + u.name + "/device")) {
      need_rescan = true;  // a new function's netdev (a VF just created)
    }
  }
  if (deps_.links->takeResync()) {
    if (auto d = deps_.links->dump(); d.ok()) {
      netlink_carrier_.clear();
      for (const auto& u : *d) netlink_carrier_[u.name] = u.carrier;
      need_rescan = true;
    }
  }
  if (need_rescan) {
    rescan();
  } else if (!changed.empty()) {
    refreshPorts(changed);
  }
  if (!changed.empty()) {
    recheck_netdevs_.insert(changed.begin(), changed.end());
    auto now = Clock::now();
    recheck_at_ = {now + 50ms, now + 250ms, now + 1s, now + 3s};
  }
  if (need_rescan || !changed.empty()) rebuild();
}

void Daemon::runTimers() {
  auto now = Clock::now();
  if (rewatch_at_ && *rewatch_at_ <= now) {
    rewatch_at_.reset();
    std::error_code ec;
    if (socket_wd_ < 0 && fs::is_directory(socketDir(), ec)) {
      watchSocketDir();
      if (socket_wd_ >= 0) {
        logger(Component::kKubelet)->info("{} is back: re-serving all pools", socketDir().string());
        for (auto& [name, rt] : pools_) restartEndpoint(rt, name);
      }
    } else if (socket_wd_ < 0) {
      rewatch_at_ = now + 500ms;
    } else {
      // Endpoints that could not be served last time.
      for (auto& [name, rt] : pools_) {
        if (!rt.endpoint) restartEndpoint(rt, name);
      }
    }
  }
  if (reload_at_ && *reload_at_ <= now) {
    reload_at_.reset();
    reloadConfig(false);
  }
  if (rescan_at_ && *rescan_at_ <= now) {
    rescan_at_.reset();
    rescan();
    rebuild();
  }
  if (!recheck_at_.empty() && recheck_at_.front() <= now) {
    while (!recheck_at_.empty() && recheck_at_.front() <= now)
      recheck_at_.erase(recheck_at_.begin());
    refreshPorts(recheck_netdevs_);
    rebuild();
    if (recheck_at_.empty()) recheck_netdevs_.clear();
  }
  if (resync_at_ <= now) {
    resync_at_ = now + opts_.resync;
    rescan();
    rebuild();
  }
  for (auto& [name, rt] : pools_) {
    if (!rt.register_at || rt.in_flight || *rt.register_at > now) continue;
    rt.register_at.reset();
    rt.in_flight = true;
    worker_->submit({name, rt.generation, {rt.socket_name, name}});
  }
}

void Daemon::reloadConfig(bool force) {
  auto log = logger(Component::kConfig);
  if (opts_.config_path.empty()) return;
  auto text = readFile(opts_.config_path);
  if (!text) {
    log->warn("cannot read {}; keeping the running config", opts_.config_path.string());
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
  applyConfig(std::move(cfg).value());
}

}  // namespace rdmanet::dp
