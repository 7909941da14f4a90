#include "deviceplugin/v1beta1/device_plugin_front.h"

#include <fmt/format.h>

#include <algorithm>

#include "deviceplugin/logging.h"
#include "deviceplugin/pools/artifacts.h"

namespace rdmanet::dp {

using namespace std::chrono_literals;

namespace {

constexpr auto kFirstRetry = 50ms;
constexpr auto kMaxRetry = 5000ms;
constexpr auto kRefusedRetry = 1000ms;
constexpr auto kReserve = 1s;

std::string socketNameFor(const PoolConfig& cfg) {
  return fmt::format("rdmanet-{}-{}.sock", cfg.resource_prefix, cfg.resource_name);
}

}  // namespace

DevicePluginFront::DevicePluginFront(DevicePluginFrontOptions opts, DevicePluginFrontDeps deps)
    : opts_(std::move(opts)),
      deps_(deps),
      socket_dir_({{.path = opts_.kubelet_dir / "device-plugins"}}, *deps.clock) {}

DevicePluginFront::~DevicePluginFront() { stop(); }

Status DevicePluginFront::start() {
  RDMANET_RETURN_IF_ERROR(socket_dir_.start());
  RDMANET_ASSIGN_OR_RETURN(
      worker_,
      RegistrationWorker::start(*deps_.registrar, socketDir() / kKubeletSocket, *deps_.clock));
  return okStatus();
}

void DevicePluginFront::stop() {
  for (auto& [name, rt] : pools_) {
    if (rt.endpoint) rt.endpoint->stop();
    rt.endpoint.reset();
  }
  worker_.reset();
}

std::shared_ptr<ResourcePool> DevicePluginFront::pool(const std::string& resource) const {
  auto it = pools_.find(resource);
  return it == pools_.end() ? nullptr : it->second.pool;
}

bool DevicePluginFront::ready() const {
  return std::all_of(pools_.begin(), pools_.end(),
                     [](const auto& kv) { return kv.second.registered; });
}

std::vector<int> DevicePluginFront::fds() const {
  std::vector<int> out;
  if (socket_dir_.fd() >= 0) out.push_back(socket_dir_.fd());
  if (worker_) out.push_back(worker_->fd());
  return out;
}

void DevicePluginFront::onReadable(int fd) {
  if (fd >= 0 && fd == socket_dir_.fd()) {
    onSocketDirEvents(socket_dir_.onReadable());
  } else if (worker_ && fd == worker_->fd()) {
    onRegistrations();
  }
}

void DevicePluginFront::onSocketDirEvents(const std::vector<KubeletDirWatcher::Event>& evs) {
  using Kind = KubeletDirWatcher::Event::Kind;
  auto log = logger(Component::kKubelet);
  for (const auto& e : evs) {
    if (e.kind == Kind::kVanished) {
      kubeletVanished();  // the pools are served again once it is back (runTimers)
      return;
    }
    const bool created = e.kind == Kind::kCreated;
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
    for (auto& [name, rt] : pools_) {
      if (rt.socket_name == e.name && rt.endpoint) {
        log->info("{}: socket {} was removed (kubelet restart?): serving it again", name, e.name);
        restartEndpoint(rt, name);
      }
    }
  }
}

std::optional<Clock::time_point> DevicePluginFront::nextDeadline() const {
  std::optional<TimePoint> next = socket_dir_.nextDeadline();
  if (reserve_at_ && (!next || *reserve_at_ < *next)) next = reserve_at_;
  for (const auto& [_, rt] : pools_) {
    if (rt.register_at && !rt.in_flight && (!next || *rt.register_at < *next)) {
      next = rt.register_at;
    }
  }
  return next;
}

void DevicePluginFront::runTimers(Clock::time_point now) {
  if (socket_dir_.runTimers(now)) {
    reserve_at_.reset();
    for (auto& [name, rt] : pools_) restartEndpoint(rt, name);
  }
  if (reserve_at_ && *reserve_at_ <= now) {
    reserve_at_.reset();
    // Endpoints that could not be served last time. While the directory is absent, its return
    // serves them all (above).
    if (socket_dir_.watching()) {
      for (auto& [name, rt] : pools_) {
        if (!rt.endpoint) restartEndpoint(rt, name);
      }
    }
  }
  const uint64_t live = liveKubelet();
  for (auto& [name, rt] : pools_) {
    if (!rt.register_at || rt.in_flight || *rt.register_at > now) continue;
    rt.register_at.reset();
    if (live != 0 && rt.registered_with == live) {
      markRegistered(rt, name);  // this endpoint is already registered with this kubelet
      continue;
    }
    rt.in_flight = true;
    worker_->submit({name, rt.generation, {rt.socket_name, name}});
  }
}

void DevicePluginFront::apply(const PluginConfig& config, const std::vector<Pool>& pools) {
  auto log = logger(Component::kConfig);
  // Pools whose config changed or went away stop; a changed one starts again below.
  std::vector<std::string> drop;
  for (const auto& kv : pools_) {
    const std::string& name = kv.first;
    auto it = std::find_if(config.pools.begin(), config.pools.end(),
                           [&name](const PoolConfig& p) { return p.fullName() == name; });
    if (it == config.pools.end()) {
      log->info("{}: removed", name);
      drop.push_back(name);
    } else if (!kv.second.pool->config().sameAs(*it)) {
      log->info("{}: config changed: restarting its endpoint", name);
      drop.push_back(name);
    }
  }
  for (const auto& name : drop) {
    bool still_named = std::any_of(config.pools.begin(), config.pools.end(),
                                   [&](const PoolConfig& p) { return p.fullName() == name; });
    stopPool(name, !still_named);
  }
  for (const Pool& p : pools) {
    const std::string name = p.config.fullName();
    auto it = pools_.find(name);
    if (it == pools_.end()) {
      startPool(p);
      continue;
    }
    size_t before = it->second.pool->snapshot().devices.size();
    if (it->second.pool->setDevices(p.devices) && p.devices.size() != before) {
      logger(Component::kDiscovery)
          ->info("{}: {} devices ({} healthy)", name, p.devices.size(), p.healthyCount());
    }
  }
}

void DevicePluginFront::startPool(Pool pool) {
  std::string name = pool.config.fullName();
  PoolRuntime rt;
  rt.socket_name = socketNameFor(pool.config);
  logger(Component::kDiscovery)
      ->info("{}: {} devices ({} healthy), mode {}, policy {}", name, pool.devices.size(),
             pool.healthyCount(), poolModeName(pool.config.mode),
             policyName(pool.config.preferred_allocation));
  rt.pool =
      std::make_shared<ResourcePool>(std::move(pool), opts_.pool, deps_.metrics, *deps_.clock);
  auto [it, _] = pools_.insert_or_assign(name, std::move(rt));
  restartEndpoint(it->second, name);
}

void DevicePluginFront::stopPool(const std::string& name, bool remove_artifacts) {
  auto it = pools_.find(name);
  if (it == pools_.end()) return;
  if (it->second.endpoint) it->second.endpoint->stop();
  it->second.pool->stop();
  if (remove_artifacts && opts_.pool.cdi) {
    removeCdiSpec(opts_.pool.cdi_dir, it->second.pool->config());
  }
  if (deps_.metrics) deps_.metrics->removePool(name);
  pools_.erase(it);
}

void DevicePluginFront::restartEndpoint(PoolRuntime& rt, const std::string& name) {
  auto log = logger(Component::kServer);
  if (rt.endpoint) rt.endpoint->stop();
  rt.endpoint.reset();
  rt.registered = false;
  rt.registered_with = 0;
  ++rt.generation;
  if (deps_.metrics) deps_.metrics->setRegistered(name, false);
  auto ep = deps_.endpoints->serve(socketDir() / rt.socket_name, rt.pool);
  if (!ep.ok()) {
    if (ep.error().msg != rt.last_error) log->error("{}: {}; retrying", name, ep.error().msg);
    rt.last_error = ep.error().msg;
    reserve_at_ = deps_.clock->now() + kReserve;
    return;
  }
  rt.last_error.clear();
  rt.endpoint = std::move(ep).value();
  log->info("{}: serving on {}", name, (socketDir() / rt.socket_name).string());
  rt.backoff = kFirstRetry;
  scheduleRegister(rt, deps_.clock->now());
}

void DevicePluginFront::scheduleRegister(PoolRuntime& rt, TimePoint when) {
  if (!rt.register_at || *rt.register_at > when) rt.register_at = when;
}

uint64_t DevicePluginFront::liveKubelet() const {
  return kubeletSocketId(socketDir() / kKubeletSocket);
}

void DevicePluginFront::markRegistered(PoolRuntime& rt, const std::string& name) {
  rt.registered = true;
  rt.register_at.reset();
  rt.last_error.clear();
  rt.backoff = kFirstRetry;
  if (deps_.metrics) deps_.metrics->setRegistered(name, true);
}

void DevicePluginFront::kubeletAppeared() {
  // A new kubelet.sock is a new kubelet, unless a pool's registration (sent when its re-served
  // socket asked for one) already reached it: that pool is done, and a second Register would be
  // refused while the first one's client is connected.
  const uint64_t live = liveKubelet();
  for (auto& [name, rt] : pools_) {
    if (live != 0 && rt.registered_with == live) {
      markRegistered(rt, name);
      continue;
    }
    rt.registered = false;
    rt.backoff = kFirstRetry;
    if (deps_.metrics) deps_.metrics->setRegistered(name, false);
    // One in flight is judged by where it went when it returns; this only makes the retry
    // (if it missed this kubelet) immediate.
    if (rt.endpoint) scheduleRegister(rt, deps_.clock->now());
  }
}

void DevicePluginFront::kubeletVanished() {
  for (auto& [name, rt] : pools_) {
    rt.registered = false;
    if (deps_.metrics) deps_.metrics->setRegistered(name, false);
  }
}

void DevicePluginFront::onRegistrations() {
  auto log = logger(Component::kKubelet);
  const TimePoint now = deps_.clock->now();
  for (auto& o : worker_->drain()) {
    auto it = pools_.find(o.request.pool);
    if (it == pools_.end()) continue;
    PoolRuntime& rt = it->second;
    rt.in_flight = false;
    if (o.request.generation != rt.generation) {
      if (!rt.registered && rt.endpoint) scheduleRegister(rt, now);
      continue;
    }
    const uint64_t live = liveKubelet();
    if (o.status.ok()) {
      rt.registered_with = o.kubelet_id;
      if (deps_.metrics) deps_.metrics->countRegistration(it->first, "ok");
      if (o.kubelet_id == 0 || o.kubelet_id != live) {
        // Accepted by a kubelet that has restarted since: the new one needs it again.
        log->info("{}: registered with a kubelet that is gone; registering again", it->first);
        rt.registered = false;
        scheduleRegister(rt, now);
        continue;
      }
      markRegistered(rt, it->first);
      log->info("{}: registered with kubelet (endpoint {})", it->first, rt.socket_name);
      continue;
    }
    bool refused = o.status.error().code != ErrorCode::kTryAgainLater;
    if (deps_.metrics) {
      deps_.metrics->countRegistration(it->first, refused ? "refused" : "unavailable");
    }
    if (refused && live != 0 &&
        (rt.registered_with == live || (rt.endpoint && rt.endpoint->watched()))) {
      // This endpoint is registered with this very kubelet already, or kubelet is watching it
      // (a duplicate slipped through, e.g. "already connected" after a Register whose kubelet
      // could not be told): retrying the same Register would be refused forever.
      log->info("{}: kubelet refused a duplicate registration ({}); keeping the first one",
                it->first, o.status.error().msg);
      rt.registered_with = live;
      markRegistered(rt, it->first);
      continue;
    }
    // Log each distinct failure once, not every retry.
    if (o.status.error().msg != rt.last_error) {
      rt.last_error = o.status.error().msg;
      if (refused) {
        log->error("{}: {}; will retry", it->first, rt.last_error);
      } else {
        log->info("{}: {}; waiting for kubelet", it->first, rt.last_error);
      }
    }
    // A refusal is not going to change soon: back off harder than for "not there yet".
    auto floor = refused ? kRefusedRetry : kFirstRetry;
    rt.backoff = std::min(std::max(rt.backoff * 2, floor), kMaxRetry);
    scheduleRegister(rt, now + rt.backoff);
  }
}

}  // namespace rdmanet::dp
