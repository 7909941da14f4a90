#pragma once
// Daemon: the device plugin's event loop. One thread polls every event source; gRPC handler
// threads and the registration worker only talk to it through ResourcePool and queues.
//
// What it reacts to, and how fast:
// - link carrier changes (LinkSource) and RDMA port state: devices' health is recomputed and
//   pushed to ListAndWatch streams at once (no polling);
// - PCI/netdev/RDMA devices appearing or vanishing (uevents, new or deleted netdevs, and a
//   periodic resync as a safety net): the inventory is rescanned and pools rebuilt;
// - kubelet restarts (inotify on the socket dir): a deleted plugin socket is re-served and
//   re-registered immediately; a new kubelet.sock triggers re-registration of every pool;
//   registration failures retry with backoff (50 ms doubling to 5 s) for as long as it takes;
// - config changes (inotify on the config file's dir, or SIGHUP): the new config is validated
//   and applied; pools whose config did not change keep their socket and streams; a bad new
//   config is logged and the running one kept;
// - SIGTERM/SIGINT or requestStop(): endpoints stop and sockets are removed.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/base/sysfs.h"
#include "common/inventory/node.h"
#include "deviceplugin/config.h"
#include "deviceplugin/endpoint.h"
#include "deviceplugin/health.h"
#include "deviceplugin/link_source.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/moved_attributes.h"
#include "deviceplugin/registration_worker.h"
#include "deviceplugin/resource_pool.h"
#include "deviceplugin/watch.h"

namespace rdmanet::dp {

struct DaemonOptions {
  std::filesystem::path kubelet_dir = "/var/lib/kubelet";
  std::filesystem::path sysfs_root = "/";
  std::filesystem::path config_path{};  // empty: the default config, nothing to reload
  ResourcePoolOptions pool{};
  std::chrono::milliseconds resync{std::chrono::seconds(30)};
  bool handle_signals = true;  // SIGTERM/SIGINT/SIGHUP via signalfd (must be blocked already)
  bool uevents = true;         // listen to kobject uevents (needs root in the initial netns)
};

struct DaemonDeps {
  EndpointFactory* endpoints = nullptr;
  KubeletRegistrar* registrar = nullptr;
  Metrics* metrics = nullptr;
  std::unique_ptr<LinkSource> links{};  // null: sysfs operstate only
};

class Daemon {
 public:
  Daemon(DaemonOptions opts, PluginConfig config, DaemonDeps deps);
  ~Daemon();

  // Serves until asked to stop. Error 5 only when the loop cannot be set up.
  Status run();
  // Thread-safe; run() returns soon after.
  void requestStop();

 private:
  using Clock = std::chrono::steady_clock;
  struct PoolRuntime {
    std::shared_ptr<ResourcePool> pool{};
    std::unique_ptr<Endpoint> endpoint{};
    std::string socket_name{};
    uint64_t generation = 0;  // bumped when the endpoint or kubelet changes
    bool registered = false;
    bool in_flight = false;
    std::optional<Clock::time_point> register_at{};
    std::chrono::milliseconds backoff{0};
    std::string last_error{};
  };

  // daemon.cc: the loop and its event sources.
  Status setUp();
  void loopOnce();
  void watchSocketDir();
  void onSocketDirEvents(const std::vector<Inotify::Event>& evs);
  void onConfigDirEvents(const std::vector<Inotify::Event>& evs);
  void onLinkUpdates();
  void onRegistrations();
  void runTimers();
  void reloadConfig(bool force);
  std::filesystem::path socketDir() const;

  // daemon_pools.cc: pools, registration bookkeeping, inventory and health.
  void rescan();
  void rebuild();
  void refreshPorts(const std::set<std::string>& netdevs);
  void applyConfig(PluginConfig cfg);
  void startPool(Pool pool);
  void stopPool(const std::string& name, bool remove_artifacts);
  void restartEndpoint(PoolRuntime& rt, const std::string& name);
  void scheduleRegister(PoolRuntime& rt, Clock::time_point when);
  void kubeletAppeared();
  void kubeletVanished();
  bool inventoryHasNetdev(const std::string& name) const;

  DaemonOptions opts_;
  PluginConfig config_;
  DaemonDeps deps_;
  Sysfs sysfs_;

  NodeInventory inv_;
  MovedAttributes moved_;  // what functions whose netdev is in a pod looked like
  std::map<std::string, bool> netlink_carrier_;
  std::map<std::string, std::vector<int>> port_cache_;  // RDMA device -> port states
  std::map<std::string, PoolRuntime> pools_;

  std::optional<Inotify> inotify_;
  int socket_wd_ = -1, config_wd_ = -1;
  std::optional<UeventSocket> uevents_;
  std::optional<Wakeup> stop_;
  Fd signal_fd_;
  std::unique_ptr<RegistrationWorker> worker_;
  std::string config_text_;
  bool stopping_ = false;
  std::optional<Clock::time_point> reload_at_, rescan_at_, rewatch_at_;
  // RDMA port state settles after the link (e.g. INIT -> ACTIVE): re-read the ports of
  // recently flapped netdevs a few times after the event.
  std::set<std::string> recheck_netdevs_;
  std::vector<Clock::time_point> recheck_at_;
  Clock::time_point resync_at_{};
};

}  // namespace rdmanet::dp
