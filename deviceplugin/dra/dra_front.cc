#include "deviceplugin/dra/dra_front.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "common/kube/names.h"
#include "deviceplugin/dra/kubelet/device_metadata.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// The watched directories, by their index in dirs_.
constexpr size_t kRegistryDir = 0;
constexpr size_t kPluginDir = 1;
constexpr auto kRefusedRetry = 1000ms;
// Between tries to list the claims a lost checkpoint is rebuilt from.
constexpr auto kRebuildRetry = 5s;
// Between reads of the shareable prepared claims' reservations. A new pod of a shared claim
// waits at most this for its device record (its CNI ADD fails until then, and kubelet retries
// the sandbox); each read is one GET per shareable claim, of which a node holds few.
constexpr auto kReservationsPoll = 3s;
// How often the CNI's network reports are read (claim_network_sync.h), and how long one pass's
// writes may take.
constexpr auto kNetworkPoll = 1s;
constexpr auto kNetworkPassDeadline = 20s;
// Kubelet deletes every ResourceSlice of its node when it starts, once it can read its Node
// (pkg/kubelet/cm/dra/plugin: wipeResourceSlices, retried after 1, 2, 4, 8 s), which may come
// after it registered the driver again. So a registration publishes at once and again at these
// times after it; the slice worker's 30 s resync is the net behind them.
constexpr std::array kRepublishAfter = {3s, 8s, 16s};

// Whether two builds of the pools would prepare and report the same.
bool samePools(const std::vector<Pool>& a, const std::vector<Pool>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Pool& x, const Pool& y) {
    return x.config.sameAs(y.config) && x.devices == y.devices;
  });
}

}  // namespace

DraFront::DraFront(DraFrontOptions opts, DraFrontDeps deps)
    : opts_(std::move(opts)),
      deps_(deps),
      preparer_({.driver = opts_.driver,
                 .node = opts_.node,
                 .cdi_dir = opts_.cdi_dir,
                 .checkpoint = opts_.kubelet_dir / "plugins" / opts_.driver / "checkpoint.json",
                 .pod_devices_dir = opts_.pod_devices_dir,
                 .metadata_dir = opts_.kubelet_dir / "plugins" / opts_.driver / kMetadataSubdir,
                 .device_metadata = opts_.device_metadata,
                 .clock = deps.clock},
                *deps.claims, state_),
      reported_(preparer_, opts_.driver,
                {.clock = deps.clock, .metrics = deps.metrics, .events = deps.events}),
      dirs_({{.path = opts_.kubelet_dir / "plugins_registry"},
             // Kubelet makes only the registry; the plugin dir is ours to make again.
             {.path = opts_.kubelet_dir / "plugins" / opts_.driver, .ours = true}},
            *deps.clock) {}

DraFront::~DraFront() { stop(); }

fs::path DraFront::pluginDir() const { return opts_.kubelet_dir / "plugins" / opts_.driver; }
fs::path DraFront::registrySocket() const { return registryDir() / (opts_.driver + "-reg.sock"); }
fs::path DraFront::draSocket() const { return pluginDir() / "dra.sock"; }

Status DraFront::start() {
  if (!kube::isDnsSubdomain(opts_.driver)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("driver name \"{}\" is not a DNS subdomain", opts_.driver));
  }
  if (!kube::isDnsSubdomain(opts_.node)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("node name \"{}\" is not a DNS subdomain", opts_.node));
  }
  if (auto st = preparer_.start(); !st.ok()) {
    return makeError(ErrorCode::kIoFailure,
                     fmt::format("prepared-claims checkpoint: {}", st.error().msg));
  }
  RDMANET_ASSIGN_OR_RETURN(notifications_, Mailbox<Notification>::open());
  std::error_code ec;
  // Only root (kubelet) needs our dir.
  fs::create_directories(pluginDir(), ec);
  fs::permissions(pluginDir(), fs::perms::owner_all, ec);
  RDMANET_RETURN_IF_ERROR(dirs_.start());
  logger(Component::kKubelet)
      ->info("DRA driver {} on node {}: {} prepared claim(s) in the checkpoint", opts_.driver,
             opts_.node, preparer_.preparedCount());
  serveDra();
  if (!dra_)
    return makeError(ErrorCode::kIoFailure, fmt::format("cannot serve {}", draSocket().string()));
  // The registration socket follows the first apply(): kubelet learns of the driver once it
  // has devices to prepare.
  return okStatus();
}

void DraFront::stop() {
  // A prepare waiting for a stalled API server would hold up the gRPC server's stop, which waits
  // for its handlers: end their reads first.
  if (deps_.claims) deps_.claims->cancel();
  claim_sync_.reset();  // its reads were just cancelled
  if (deps_.claim_status) deps_.claim_status->cancel();
  network_sync_.reset();
  if (registration_) registration_->stop();
  registration_.reset();
  state_.stop();
  if (dra_) dra_->stop();
  dra_.reset();
  registered_ = false;
}

void DraFront::serveRegistration() {
  auto log = logger(Component::kKubelet);
  if (registration_) registration_->stop();
  registration_.reset();
  registered_ = false;
  auto s = dp::serveRegistration(registrySocket(),
                                 {.name = opts_.driver, .endpoint = draSocket().string()},
                                 [this](bool registered, const std::string& error) {
                                   notifications_->post({registered, error});
                                 });
  if (!s.ok()) {
    log->error("{}; retrying", s.error().msg);
    reserve_at_ = deps_.clock->now() + kRefusedRetry;
    return;
  }
  registration_ = std::move(s).value();
  log->info("serving registration on {}", registrySocket().string());
}

void DraFront::serveDra() {
  if (dra_) dra_->stop();
  dra_.reset();
  auto s = dp::serveDra(draSocket(), {.node = opts_.node, .health_resend = opts_.health_resend},
                        reported_, state_, *deps_.clock);
  if (!s.ok()) {
    logger(Component::kServer)->error("{}; retrying", s.error().msg);
    reserve_at_ = deps_.clock->now() + kRefusedRetry;
    return;
  }
  dra_ = std::move(s).value();
  logger(Component::kServer)->info("serving DRAPlugin and health on {}", draSocket().string());
}

std::vector<int> DraFront::fds() const {
  std::vector<int> out;
  if (dirs_.fd() >= 0) out.push_back(dirs_.fd());
  if (notifications_) out.push_back(notifications_->fd());
  return out;
}

void DraFront::onReadable(int fd) {
  if (fd >= 0 && fd == dirs_.fd()) {
    onDirEvents(dirs_.onReadable());
  } else if (notifications_ && fd == notifications_->fd()) {
    onNotifications();
  }
}

void DraFront::onDirEvents(const std::vector<KubeletDirWatcher::Event>& evs) {
  using Kind = KubeletDirWatcher::Event::Kind;
  auto log = logger(Component::kKubelet);
  bool reserve_reg = false, reserve_dra = false;
  for (const auto& e : evs) {
    if (e.kind == Kind::kVanished) {
      registered_ = false;  // both sockets are served again once both dirs are back (runTimers)
      return;
    }
    if (e.kind != Kind::kRemoved) continue;
    if (e.dir == kRegistryDir && applied_ && e.name == registrySocket().filename()) {
      reserve_reg = true;
    }
    if (e.dir == kPluginDir && e.name == draSocket().filename()) reserve_dra = true;
  }
  if (reserve_dra) {
    log->info("{} was removed: serving it again", draSocket().string());
    serveDra();
  }
  if (reserve_reg) {
    log->info("{} was removed: serving it again", registrySocket().string());
    serveRegistration();
  }
}

void DraFront::onNotifications() {
  auto log = logger(Component::kKubelet);
  for (const Notification& n : notifications_->drain()) {
    if (n.registered) {
      if (!registered_) {
        log->info("registered with kubelet as DRA driver {}", opts_.driver);
      } else {
        log->info("registered with kubelet again (kubelet restarted): publishing the slices again");
      }
      registered_ = true;
      reserve_at_.reset();
      // Kubelet deletes every ResourceSlice of its node when it starts (so that nothing is
      // scheduled to a driver that may not come back) and registers the driver again: publish
      // again (the publisher reconciles against the API server) rather than leave the node
      // without devices until the slice worker's next resync.
      republish();
      republishes_done_ = 0;
      republish_at_ = deps_.clock->now() + kRepublishAfter[0];
    } else {
      // Kubelet's watcher retries a socket only when it appears again.
      log->error(
          "kubelet refused DRA driver {}: {}; serving the registration socket again in {} "
          "ms",
          opts_.driver, n.error.empty() ? "no reason given" : n.error, kRefusedRetry.count());
      registered_ = false;
      reserve_at_ = deps_.clock->now() + kRefusedRetry;
    }
  }
}

void DraFront::startClaimSync() {
  if (deps_.claim_status && !opts_.pod_devices_dir.empty()) {
    network_ = std::make_unique<ClaimNetworkSync>(
        opts_.pod_devices_dir, opts_.node, [this] { return preparer_.preparedClaims(); },
        *deps_.claim_status);
    network_sync_ = std::make_unique<Worker>(
        *deps_.clock,
        [this](const std::atomic<bool>& quit) -> std::optional<Clock::time_point> {
          if (quit) return std::nullopt;
          (void)network_->runOnce(Deadline::in(kNetworkPassDeadline, *deps_.clock));
          return deps_.clock->now() + kNetworkPoll;
        },
        deps_.clock->now());
  }
  claim_sync_ = std::make_unique<Worker>(
      *deps_.clock,
      [this](const std::atomic<bool>& quit) -> std::optional<Clock::time_point> {
        if (preparer_.rebuildPending()) {
          const Status st = preparer_.rebuildFromApi();
          if (quit) return std::nullopt;
          if (!st.ok()) {
            logger(Component::kKubelet)
                ->error(
                    "cannot rebuild the prepared-claims checkpoint from the API server ({}); "
                    "trying again in {} s",
                    st.error().msg, std::chrono::seconds(kRebuildRetry).count());
            return deps_.clock->now() + kRebuildRetry;
          }
        }
        preparer_.refreshReservations();
        return deps_.clock->now() + kReservationsPoll;
      },
      deps_.clock->now() + (preparer_.rebuildPending() ? 0s : kReservationsPoll));
}

void DraFront::republish() {
  // Only once the devices are known (version 0 is the empty start): an empty snapshot would
  // withdraw every slice.
  if (auto cur = state_.current().value; deps_.publisher && cur->version > 0) {
    deps_.publisher->publish(std::move(cur), opts_.allow_multiple_allocations);
  }
}

std::optional<Clock::time_point> DraFront::nextDeadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& t : {dirs_.nextDeadline(), reserve_at_, republish_at_}) {
    if (t && (!next || *t < *next)) next = t;
  }
  return next;
}

void DraFront::runTimers(Clock::time_point now) {
  if (republish_at_ && *republish_at_ <= now) {
    republish();
    const auto since = kRepublishAfter[republishes_done_];
    if (++republishes_done_ < kRepublishAfter.size()) {
      republish_at_ = now + (kRepublishAfter[republishes_done_] - since);
    } else {
      republish_at_.reset();
    }
  }
  if (dirs_.runTimers(now)) {
    serveDra();
    if (applied_) serveRegistration();
  }
  if (reserve_at_ && *reserve_at_ <= now) {
    reserve_at_.reset();
    if (!dra_) serveDra();
    if (applied_) serveRegistration();
  }
}

void DraFront::apply(const PluginConfig&, const std::vector<Pool>& pools) {
  auto cur = state_.current().value;
  if (cur->version > 0 && samePools(cur->pools, pools)) return;
  std::vector<std::string> dups;
  DeviceSnapshot inv{.pools = pools, .devices = nodeDevices(pools, &dups)};
  for (const auto& d : dups) {
    logger(Component::kDiscovery)
        ->warn("device {} is in more than one pool; DRA publishes it in the first", d);
  }
  const auto unhealthy = std::count_if(inv.devices.begin(), inv.devices.end(),
                                       [](const NodeDevice& d) { return !d.healthy(); });
  if (cur->devices.size() != inv.devices.size()) {
    logger(Component::kDiscovery)
        ->info("DRA: {} devices ({} unhealthy)", inv.devices.size(), unhealthy);
  }
  state_.publish(std::move(inv), stampVersion);
  if (!applied_) {
    applied_ = true;
    // The devices are known now: make the checkpoint's claims whole again (a reboot empties the
    // CDI dir) before kubelet, which learns of the driver at registration, asks for any of them.
    preparer_.restoreSpecs();
    startClaimSync();
    serveRegistration();
  }
  if (deps_.publisher)
    deps_.publisher->publish(state_.current().value, opts_.allow_multiple_allocations);
}

}  // namespace rdmanet::dp
