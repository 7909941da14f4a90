#pragma once
// Daemon: the node daemon's event loop. One thread polls every event source, keeps the core
// (NodePools: inventory, health inputs, pools) current and hands the pools to the front (the
// device-plugin API or DRA, front/front.h); gRPC handler threads and workers only talk to it
// through the front's queues and ResourcePool.
//
// What it reacts to, and how fast:
// - link state changes (LinkSource), a PF's VF link states and RDMA port state: devices' health
//   (pools/health.h) is recomputed and handed to the front at once (no polling);
// - PCI/netdev/RDMA devices appearing or vanishing: a uevent re-reads only the PF (with its
//   VFs) it concerns; new or deleted netdevs rescan the whole node; the pools are rebuilt;
// - a periodic resync, the safety net against lost events: a cheap check that sysfs still shows
//   what the last scan read (pools/scan_shape.h), a full rescan only when it does not, and a
//   re-read of the port and PF link states that change without a uevent;
// - config changes (inotify on the config file's dir, or SIGHUP): the new config is validated
//   and applied; a bad new config is logged and the running one kept;
// - LLDP frames on the ports (LldpSocket): each port's switch neighbour and rail, kept to the
//   TTL the switch gave (lldp_table.h), handed to the front (and the metrics) when they change;
// - the front's own sources (kubelet restarts, registration results, ...);
// - SIGTERM/SIGINT or requestStop(): the front stops.
//
// Every loop turn stamps a heartbeat (at least once a second while idle), so /healthz can tell
// a loop that stopped turning. Time comes from the injected clock: runOnce() lets tests drive
// the loop turn by turn, with a FakeClock, without sleeping.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/sysfs.h"
#include "common/net/lldp_socket.h"
#include "common/os/watch.h"
#include "deviceplugin/daemon/link_source.h"
#include "deviceplugin/daemon/lldp_table.h"
#include "deviceplugin/daemon/refused_names.h"
#include "deviceplugin/front/front.h"
#include "deviceplugin/metrics.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/node_pools.h"

namespace rdmanet::dp {

struct DaemonOptions {
  std::filesystem::path sysfs_root = "/";
  std::filesystem::path config_path{};  // empty: the default config, nothing to reload
  std::chrono::milliseconds resync{std::chrono::seconds(30)};
  bool handle_signals = true;  // SIGTERM/SIGINT/SIGHUP via signalfd (must be blocked already)
  bool uevents = true;         // listen to kobject uevents (needs root in the initial netns)
};

struct DaemonDeps {
  const Clock* clock = nullptr;
  Front* front = nullptr;
  std::unique_ptr<LinkSource> links{};  // null: sysfs operstate only, no VF tables
  std::unique_ptr<LldpSocket> lldp{};   // null: no switch neighbours, no rails
  Metrics* metrics = nullptr;           // null: the neighbours are not reported on /metrics
  // Called once, on the loop's thread, when the front is ready (every pool registered) for the
  // first time: start-up is over, background work may begin.
  std::function<void()> on_ready{};
};

class Daemon {
 public:
  Daemon(DaemonOptions opts, PluginConfig config, DaemonDeps deps);
  ~Daemon();

  // Sets up every event source, scans the node and starts the front. Error 5 when the loop
  // cannot be set up.
  Status start();
  // One loop turn: waits up to `max_wait` (real time) for an event, handles what arrived, then
  // runs what is due on the clock. start() first.
  void runOnce(std::chrono::milliseconds max_wait);
  // start(), then turns until asked to stop; the front is stopped on the way out.
  Status run();
  // Thread-safe; run() returns soon after.
  void requestStop();
  bool stopping() const { return stopping_; }

  // The clock's time at the last loop turn. Thread-safe (read by the HTTP server).
  Clock::time_point heartbeat() const;
  // Whether the front is ready (registered with kubelet), as of the last loop turn. Any thread.
  bool ready() const { return ready_.load(std::memory_order_relaxed); }
  const NodePools& core() const { return core_; }

 private:
  using TimePoint = Clock::time_point;

  void onConfigDirEvents(const std::vector<Inotify::Event>& evs);
  void onLinkUpdates();
  void onLldpFrames();
  // Listens for LLDP on the ports of the current scan (after it changed) and forgets the
  // neighbours of netdevs that are no longer ports. Returns whether neighbours were forgotten.
  bool listenLldp(bool force);
  void applyNeighbors();
  // Hands the core's neighbours, with their rails under the running config, to the metrics.
  void reportNeighbors();
  void onSignals();
  void runTimers(TimePoint now);
  void reloadConfig(bool force);
  void rescan();
  void resync();
  // Builds the pools from the core, logs health changes, hands them to the front.
  void publish();
  TimePoint nextDeadline() const;
  void beat();

  DaemonOptions opts_;
  DaemonDeps deps_;
  RefusedNameLog refused_names_;  // before sysfs_, which reports to it
  Sysfs sysfs_;
  NodePools core_;

  std::optional<Inotify> inotify_;
  int config_wd_ = -1;
  std::optional<UeventSocket> uevents_;
  std::optional<Wakeup> stop_;
  Fd signal_fd_;
  std::string config_text_;
  bool stopping_ = false;
  bool ready_signalled_ = false;
  std::atomic<Clock::duration::rep> heartbeat_{0};
  std::atomic<bool> ready_{false};
  std::optional<TimePoint> reload_at_, rescan_at_;
  std::vector<std::string> pending_devpaths_;  // uevents waiting for the rescan debounce
  // RDMA port state settles after the link (e.g. INIT -> ACTIVE): re-read the ports of
  // recently flapped netdevs a few times after the event.
  std::set<std::string> recheck_netdevs_;
  std::vector<TimePoint> recheck_at_;
  TimePoint resync_at_{};
  LldpTable lldp_table_;
  std::set<std::string> lldp_ports_;       // what the LLDP socket listens on
  std::set<std::string> lldp_bad_ports_;   // ports whose last frame was bad (logged once)
  std::set<std::string> lldp_held_ports_;  // ports whose change was held down (logged once)
};

}  // namespace rdmanet::dp
