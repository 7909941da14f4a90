#include "deviceplugin/daemon/app.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "common/net/libnl_netlink.h"
#include "deviceplugin/daemon/daemon.h"
#include "deviceplugin/daemon/doctor_runner.h"
#include "deviceplugin/daemon/flags.h"
#include "deviceplugin/daemon/front_wiring.h"
#include "deviceplugin/daemon/http_server.h"
#include "deviceplugin/daemon/malloc_arenas.h"
#include "deviceplugin/daemon/pod_resources.h"
#include "deviceplugin/daemon/probes.h"
#include "deviceplugin/daemon/subcommands.h"
#include "deviceplugin/dra/apiserver/slice_metrics.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

// The periodic doctor starts once every pool is registered, or after this long without kubelet.
constexpr std::chrono::seconds kDoctorHold{30};

// The log level, then the pools: --config's, or the built-in default. Null after saying why.
std::optional<PluginConfig> startupConfig(const Flags& flags) {
  if (auto st = setLogLevel(flags.log_level); !st.ok()) {
    std::cerr << "rdmanet-device-plugin: " << st.error().msg << "\n";
    return std::nullopt;
  }
  if (flags.config.empty()) return defaultConfig();
  auto cfg = loadConfigFile(flags.config);
  if (!cfg.ok()) {
    logger(Component::kConfig)->error("bad config: {}", cfg.error().msg);
    return std::nullopt;
  }
  return std::move(cfg).value();
}

// Blocked before any thread exists, so only the daemon's signalfd ever sees them.
void blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

// The doctor checks PFC on the priority the pools' traffic uses: the first pool that names one.
doctor::DoctorOptions doctorOptions(const PluginConfig& config) {
  doctor::DoctorOptions o;
  for (const auto& p : config.pools) {
    if (p.lossless && p.lossless->priority) {
      o.lossless_priority = *p.lossless->priority;
      break;
    }
  }
  return o;
}

// Started after the signals are blocked (its thread inherits the mask); read by /metrics. Null
// when --doctor-interval is 0.
std::unique_ptr<DoctorRunner> startDoctor(const Flags& flags, const PluginConfig& config,
                                          const Clock& clock) {
  if (flags.doctor_interval.count() <= 0) return nullptr;
  return std::make_unique<DoctorRunner>(
      DoctorRunnerOptions{.sysfs_root = flags.sysfs_root,
                          .interval = flags.doctor_interval,
                          .doctor = doctorOptions(config),
                          .hold = kDoctorHold},
      []() -> Result<std::unique_ptr<Netlink>> {
        RDMANET_ASSIGN_OR_RETURN(auto nl, LibnlNetlink::open());
        return std::unique_ptr<Netlink>(std::move(nl));
      },
      clock);
}

// Carrier changes for event-driven health; without netlink, health comes from sysfs alone.
std::unique_ptr<LinkSource> openLinks() {
  auto l = openNetlinkLinkSource();
  if (l.ok()) return std::move(l).value();
  logger(Component::kHealth)
      ->warn("no netlink link monitor ({}); health from sysfs only", l.error().msg);
  return nullptr;
}

// The switch neighbour of each port, for the rails (--lldp). Receiving LLDP needs CAP_NET_RAW
// (the chart grants it with lldp.enabled); without it the daemon serves as before, with no rails.
std::unique_ptr<LldpSocket> openLldp(const Flags& flags) {
  if (!flags.lldp) return nullptr;
  auto s = LldpSocket::open();
  if (s.ok()) return std::make_unique<LldpSocket>(std::move(s).value());
  logger(Component::kDiscovery)
      ->warn("no LLDP ({}; needs CAP_NET_RAW): no switch neighbours or rails", s.error().msg);
  return nullptr;
}

// The per-pod series, read on each scrape on the HTTP thread (podnet/pod_metrics.h).
// Cross-checked with kubelet's pod-resources where kubelet is there (the CNI's state alone
// otherwise); a slow kubelet costs a scrape at most the deadline. Declared in use order.
struct PodScrape {
  podnet::PodSeams seams{};
  std::unique_ptr<podnet::KubeletPodSource> kubelet{};
  std::unique_ptr<podnet::PodMetrics> metrics{};  // null with --cni-state-dir off
};

PodScrape openPodScrape(const Flags& flags) {
  PodScrape p;
  p.kubelet = makePodResourcesSource(flags.kubelet_dir / "pod-resources" / "kubelet.sock",
                                     std::chrono::milliseconds(500), flags.driver_name);
  if (flags.cni_state_dir == "off") return p;
  p.seams = podnet::openPodSeams(flags.sysfs_root, [](const std::string& note) {
    logger(Component::kMetrics)->warn("pod metrics: {}", note);
  });
  p.metrics = std::make_unique<podnet::PodMetrics>(
      podnet::PodMetricsOptions{.state_dir = flags.cni_state_dir}, p.seams.deps(), p.kubelet.get());
  return p;
}

// The probes are answered on the server's thread at once; /metrics is rendered on its own,
// shared by the scrapes that come together, and capped (http_server.h). Null with
// --metrics-addr "" or off.
Result<std::unique_ptr<HttpServer>> startHttp(const Flags& flags, const Clock& clock,
                                              HttpServer::Handler handler) {
  if (flags.metrics_addr.empty() || flags.metrics_addr == "off") {
    return std::unique_ptr<HttpServer>();
  }
  HttpLimits limits = kHttpLimits;
  limits.render_max_age = flags.metrics_max_age;
  RDMANET_ASSIGN_OR_RETURN(auto http, HttpServer::start(flags.metrics_addr, std::move(handler),
                                                        {"/metrics"}, limits, &clock));
  logger(Component::kMetrics)->info("metrics listening on port {}", http->port());
  return http;
}

// Serves kubelet until a stop signal: the daemon's loop over the chosen front, with the periodic
// doctor, /metrics and the probes beside it.
int serve(const Flags& flags, PluginConfig config) {
  Metrics metrics;
  SteadyClock clock;
  std::unique_ptr<DoctorRunner> doctor = startDoctor(flags, config, clock);
  auto wiring = makeFrontWiring(flags, std::getenv("NODE_NAME"), clock, metrics);
  if (!wiring.ok()) {
    logger(Component::kConfig)->error("{}", wiring.error().msg);
    return 1;
  }
  const DraWiring& dra = wiring->dra;
  Daemon daemon({.sysfs_root = flags.sysfs_root,
                 .config_path = flags.config,
                 .resync = std::chrono::seconds(flags.resync_seconds)},
                std::move(config),
                {.clock = &clock,
                 .front = wiring->front(),
                 .links = openLinks(),
                 .lldp = openLldp(flags),
                 .metrics = &metrics,
                 .on_ready = [&doctor] {
                   if (doctor) doctor->release();
                 }});
  const PodScrape pods = openPodScrape(flags);
  auto http = startHttp(flags, clock, [&](const std::string& path) {
    return probeResponse(
        path,
        {.metrics = metrics,
         .doctor = doctor.get(),
         .pods = pods.metrics.get(),
         .heartbeat_age = clock.now() - daemon.heartbeat(),
         .front_metrics = dra.slices ? renderSliceMetrics(dra.slices->status()) : std::string(),
         .ready = daemon.ready(),
         .ready_note = dra.front ? dra.front->recoveryNote() : std::string()});
  });
  if (!http.ok()) {
    logger(Component::kMetrics)->error("{}", http.error().msg);
    return http.error().code == ErrorCode::kInvalidConfig ? 1 : 2;
  }
  const Status st = daemon.run();
  // Shutdown: the workers are all told to stop before any of them is waited for (in the
  // destructors below), so that their waits overlap instead of adding up: the HTTP server's
  // stop waits for a /metrics render in progress, a doctor run up to DoctorRunner::kStopGrace.
  if (doctor) doctor->requestStop();
  if (dra.slice_client) dra.slice_client->cancel();
  if (dra.event_client) dra.event_client->cancel();
  if (dra.status_client) dra.status_client->cancel();
  if (!st.ok()) {
    logger(Component::kServer)->error("{}", st.error().msg);
    return 2;
  }
  return 0;
}

}  // namespace

int runDevicePlugin(int argc, const char* const* argv) {
  limitMallocArenas();  // before any thread
  if (argc >= 2 && std::string_view(argv[1]) == "doctor") {
    return runDoctorCommand(std::vector<std::string>(argv + 2, argv + argc));
  }
  auto flags = parseFlags(argc, argv);
  if (!flags.ok()) {
    std::cerr << "rdmanet-device-plugin: " << flags.error().msg << "\n";
    return 1;
  }
  if (auto code = runOneShot(*flags, argv[0])) return *code;
  auto config = startupConfig(*flags);
  if (!config) return 1;
  blockStopSignals();
  return serve(*flags, std::move(*config));
}

}  // namespace rdmanet::dp
