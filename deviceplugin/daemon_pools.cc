// The daemon's pools: lifecycle across config reloads and kubelet restarts, registration
// bookkeeping, and turning inventory + link state into device health.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "deviceplugin/artifacts.h"
#include "deviceplugin/daemon.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr auto kFirstRetry = 50ms;
constexpr auto kMaxRetry = 5000ms;

std::string socketNameFor(const PoolConfig& cfg) {
  return fmt::format("rdmanet-{}-{}.sock", cfg.resource_prefix, cfg.resource_name);
}

// Numeric state of every port ("4: ACTIVE" -> 4); cheap enough to re-read on each link event.
std::vector<int> readPortStates(const Sysfs& sysfs, const std::string& dev) {
  std::vector<int> out;
  std::string base = "/sys/class/infiniband/" + dev + "/ports";
  for (const auto& port : sysfs.list(base)) {
    auto s = sysfs.readOpt(base + "/" + port + "/state");
    int v = 0;
    if (s) std::from_chars(s->data(), s->data() + s->size(), v);
    out.push_back(v);
  }
  return out;
}

}  // namespace

bool Daemon::inventoryHasNetdev(const std::string& name) const {
  for (const NicFunction& fn : inv_.nics) {
    for (const Netdev& n : fn.netdevs) {
      if (n.name == name) return true;
    }
  }
  return false;
}

void Daemon::rescan() {
  auto start = Clock::now();
  inv_ = scanNode(sysfs_, {.gids = false});  // pools and health use no GIDs
  moved_.observe(inv_);
  port_cache_.clear();
  logger(Component::kDiscovery)
      ->debug("scanned {} NIC functions ({} with their netdev in a pod), {} GPUs in {} ms",
              inv_.nics.size(), moved_.movedCount(), inv_.gpus.size(),
              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

void Daemon::refreshPorts(const std::set<std::string>& netdevs) {
  std::set<std::string> devs;
  for (const NicFunction& fn : inv_.nics) {
    bool hit = std::any_of(fn.netdevs.begin(), fn.netdevs.end(),
                           [&](const Netdev& n) { return netdevs.count(n.name) > 0; });
    if (!hit) continue;
    for (const auto& r : fn.rdma) devs.insert(r.name);
    // A PF's port takes its VFs' RDMA ports down with it.
    for (const PciAddress& vf : fn.pci.vfs) {
      if (const NicFunction* v = inv_.nic(vf)) {
        for (const auto& r : v->rdma) devs.insert(r.name);
      }
    }
  }
  for (const auto& d : devs) port_cache_[d] = readPortStates(sysfs_, d);
}

void Daemon::rebuild() {
  auto log = logger(Component::kHealth);
  LinkStates links;
  links.seedFromInventory(inv_);
  for (const auto& [name, up] : netlink_carrier_) links.set(name, up);
  for (Pool& p : buildPools(config_, inv_, &moved_)) {
    auto it = pools_.find(p.config.fullName());
    if (it == pools_.end()) continue;
    for (PoolDevice& d : p.devices) {
      if (auto c = port_cache_.find(d.rdma_device); c != port_cache_.end()) {
        d.rdma_port_states = c->second;
      }
    }
    // Start from the current health so applyHealth reports transitions against it.
    PoolSnapshot cur = it->second.pool->snapshot();
    for (PoolDevice& d : p.devices) {
      auto old =
          std::lower_bound(cur.devices.begin(), cur.devices.end(), d.id,
                           [](const PoolDevice& a, const std::string& id) { return a.id < id; });
      if (old != cur.devices.end() && old->id == d.id) d.healthy = old->healthy;
    }
    for (const HealthChange& c : applyHealth(p, links)) {
      // Shared slots would repeat the same line rdmaHcaMax times: log their PF once.
      if (p.config.mode == PoolMode::kShared && !c.id.ends_with("-0")) continue;
      log->info("{}: {} is now {}", p.config.fullName(), c.id, c.healthy ? "Healthy" : "Unhealthy");
    }
    size_t total = p.devices.size(), healthy = p.healthyCount();
    if (it->second.pool->setDevices(std::move(p.devices)) && total != cur.devices.size()) {
      logger(Component::kDiscovery)->info("{}: {} devices ({} healthy)", it->first, total, healthy);
    }
  }
}

void Daemon::startPool(Pool pool) {
  std::string name = pool.config.fullName();
  PoolRuntime rt;
  rt.socket_name = socketNameFor(pool.config);
  LinkStates links;
  links.seedFromInventory(inv_);
  for (const auto& [n, up] : netlink_carrier_) links.set(n, up);
  applyHealth(pool, links);
  logger(Component::kDiscovery)
      ->info("{}: {} devices ({} healthy), mode {}, policy {}", name, pool.devices.size(),
             pool.healthyCount(), poolModeName(pool.config.mode),
             policyName(pool.config.preferred_allocation));
  rt.pool = std::make_shared<ResourcePool>(std::move(pool), opts_.pool, deps_.metrics);
  auto [it, _] = pools_.insert_or_assign(name, std::move(rt));
  restartEndpoint(it->second, name);
}

void Daemon::stopPool(const std::string& name, bool remove_artifacts) {
  auto it = pools_.find(name);
  if (it == pools_.end()) return;
  if (it->second.endpoint) it->second.endpoint->stop();
  it->second.pool->stop();
  if (remove_artifacts && opts_.pool.cdi)
    removeCdiSpec(opts_.pool.cdi_dir, it->second.pool->config());
  if (deps_.metrics) deps_.metrics->removePool(name);
  pools_.erase(it);
}

void Daemon::restartEndpoint(PoolRuntime& rt, const std::string& name) {
  auto log = logger(Component::kServer);
  if (rt.endpoint) rt.endpoint->stop();
  rt.endpoint.reset();
  rt.registered = false;
  ++rt.generation;
  if (deps_.metrics) deps_.metrics->setRegistered(name, false);
  auto ep = deps_.endpoints->serve(socketDir() / rt.socket_name, rt.pool);
  if (!ep.ok()) {
    if (ep.error().msg != rt.last_error) log->error("{}: {}; retrying", name, ep.error().msg);
    rt.last_error = ep.error().msg;
    rewatch_at_ = Clock::now() + 1s;  // the dir may be gone: re-serve when it is back
    return;
  }
  rt.last_error.clear();
  rt.endpoint = std::move(ep).value();
  log->info("{}: serving on {}", name, (socketDir() / rt.socket_name).string());
  rt.backoff = kFirstRetry;
  scheduleRegister(rt, Clock::now());
}

void Daemon::scheduleRegister(PoolRuntime& rt, Clock::time_point when) {
  if (!rt.register_at || *rt.register_at > when) rt.register_at = when;
}

void Daemon::kubeletAppeared() {
  for (auto& [name, rt] : pools_) {
    ++rt.generation;  // an answer from the old kubelet no longer counts
    rt.registered = false;
    rt.backoff = kFirstRetry;
    if (deps_.metrics) deps_.metrics->setRegistered(name, false);
    if (rt.endpoint) scheduleRegister(rt, Clock::now());
  }
}

void Daemon::kubeletVanished() {
  for (auto& [name, rt] : pools_) {
    rt.registered = false;
    if (deps_.metrics) deps_.metrics->setRegistered(name, false);
  }
}

void Daemon::onRegistrations() {
  auto log = logger(Component::kKubelet);
  for (auto& o : worker_->drain()) {
    auto it = pools_.find(o.request.pool);
    if (it == pools_.end()) continue;
    PoolRuntime& rt = it->second;
    rt.in_flight = false;
    if (o.request.generation != rt.generation) {
      if (!rt.registered && rt.endpoint) scheduleRegister(rt, Clock::now());
      continue;
    }
    if (o.status.ok()) {
      rt.registered = true;
      rt.last_error.clear();
      rt.backoff = kFirstRetry;
      if (deps_.metrics) {
        deps_.metrics->countRegistration(it->first, "ok");
        deps_.metrics->setRegistered(it->first, true);
      }
      log->info("{}: registered with kubelet (endpoint {})", it->first, rt.socket_name);
      continue;
    }
    bool refused = o.status.error().code != ErrorCode::kTryAgainLater;
    if (deps_.metrics)
      deps_.metrics->countRegistration(it->first, refused ? "refused" : "unavailable");
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
    auto floor = refused ? std::chrono::milliseconds(1000) : kFirstRetry;
    rt.backoff = std::min(std::max(rt.backoff * 2, floor), kMaxRetry);
    scheduleRegister(rt, Clock::now() + rt.backoff);
  }
}

void Daemon::applyConfig(PluginConfig cfg) {
  auto log = logger(Component::kConfig);
  std::set<std::string> keep;
  for (const PoolConfig& pc : cfg.pools) {
    auto it = pools_.find(pc.fullName());
    if (it != pools_.end() && it->second.pool->config().sameAs(pc)) keep.insert(pc.fullName());
  }
  std::vector<std::string> drop;
  for (const auto& [name, _] : pools_) {
    if (!keep.count(name)) drop.push_back(name);
  }
  bool still_named = false;
  for (const auto& name : drop) {
    still_named = std::any_of(cfg.pools.begin(), cfg.pools.end(),
                              [&](const PoolConfig& p) { return p.fullName() == name; });
    log->info("{}: {}", name, still_named ? "config changed: restarting its endpoint" : "removed");
    stopPool(name, !still_named);
  }
  config_ = std::move(cfg);
  for (Pool& p : buildPools(config_, inv_, &moved_)) {
    if (!keep.count(p.config.fullName())) startPool(std::move(p));
  }
  for (const auto& name : keep) log->debug("{}: unchanged, socket kept", name);
  rebuild();
}

}  // namespace rdmanet::dp
