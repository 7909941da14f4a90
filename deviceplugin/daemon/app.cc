#include "deviceplugin/daemon/app.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include "common/cli/command_line.h"
#include "common/net/libnl_netlink.h"
#include "deviceplugin/daemon/daemon.h"
#include "deviceplugin/daemon/doctor_runner.h"
#include "deviceplugin/daemon/dra_wiring.h"
#include "deviceplugin/daemon/flags.h"
#include "deviceplugin/daemon/http_server.h"
#include "deviceplugin/daemon/malloc_arenas.h"
#include "deviceplugin/daemon/pod_resources.h"
#include "deviceplugin/daemon/probes.h"
#include "deviceplugin/daemon/subcommands.h"
#include "deviceplugin/dra/apiserver/slice_metrics.h"
#include "deviceplugin/logging.h"
#include "deviceplugin/v1beta1/device_plugin_front.h"

namespace rdmanet::dp {

namespace {

// The periodic doctor starts once every pool is registered, or after this long without kubelet.
constexpr std::chrono::seconds kDoctorHold{30};

int checkConfig(const std::filesystem::path& file) {
  auto cfg = loadConfigFile(file);
  if (!cfg.ok()) {
    std::cerr << "invalid config: " << cfg.error().msg << "\n";
    return 1;
  }
  std::cout << fmt::format("config OK: {} pools\n", cfg->pools.size());
  for (const auto& p : cfg->pools) {
    std::cout << fmt::format("  {} mode={} preferredAllocation={} selectors={}\n", p.fullName(),
                             poolModeName(p.mode), policyName(p.preferred_allocation),
                             p.selectors.size());
  }
  return 0;
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
  if (flags->help) {
    std::cout << usage();
    return 0;
  }
  if (flags->version) {
    std::cout << "rdmanet-device-plugin " << cli::version() << "\n";
    return 0;
  }
  if (!flags->check_config.empty()) return checkConfig(flags->check_config);
  if (!flags->install_cni.empty()) return runInstallCni(argv[0], flags->install_cni);
  if (auto st = setLogLevel(flags->log_level); !st.ok()) {
    std::cerr << "rdmanet-device-plugin: " << st.error().msg << "\n";
    return 1;
  }
  auto log = logger(Component::kConfig);
  PluginConfig config = defaultConfig();
  if (!flags->config.empty()) {
    auto cfg = loadConfigFile(flags->config);
    if (!cfg.ok()) {
      log->error("bad config: {}", cfg.error().msg);
      return 1;
    }
    config = std::move(cfg).value();
  }
  // Blocked before any thread exists, so only the daemon's signalfd ever sees them.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Metrics metrics;
  SteadyClock clock;
  // Started after the signals are blocked (its thread inherits the mask); read by /metrics.
  std::unique_ptr<DoctorRunner> doctor;
  if (flags->doctor_interval.count() > 0) {
    doctor = std::make_unique<DoctorRunner>(
        DoctorRunnerOptions{.sysfs_root = flags->sysfs_root,
                            .interval = flags->doctor_interval,
                            .doctor = doctorOptions(config),
                            .hold = kDoctorHold},
        []() -> Result<std::unique_ptr<Netlink>> {
          RDMANET_ASSIGN_OR_RETURN(auto nl, LibnlNetlink::open());
          return std::unique_ptr<Netlink>(std::move(nl));
        },
        clock);
  }
  auto endpoints = makeGrpcEndpointFactory();
  auto registrar = makeGrpcRegistrar(std::chrono::seconds(3));
  DevicePluginFront dp_front(
      {.kubelet_dir = flags->kubelet_dir,
       .pool = {.devinfo_dir = flags->devinfo_dir, .cdi_dir = flags->cdi_dir, .cdi = flags->cdi}},
      {.clock = &clock,
       .endpoints = endpoints.get(),
       .registrar = registrar.get(),
       .metrics = &metrics});
  // One front per node (KEP-5004): the device plugin, or DRA.
  Front* front = &dp_front;
  DraWiring dra;
  if (flags->api == "dra") {
    auto w = makeDraWiring(*flags, std::getenv("NODE_NAME"), clock, &metrics);
    if (!w.ok()) {
      log->error("{}", w.error().msg);
      return 1;
    }
    dra = std::move(w).value();
    front = dra.front.get();
  }
  std::unique_ptr<LinkSource> links;
  if (auto l = openNetlinkLinkSource(); l.ok()) {
    links = std::move(l).value();
  } else {
    logger(Component::kHealth)
        ->warn("no netlink link monitor ({}); health from sysfs only", l.error().msg);
  }
  Daemon daemon({.sysfs_root = flags->sysfs_root,
                 .config_path = flags->config,
                 .resync = std::chrono::seconds(flags->resync_seconds)},
                std::move(config),
                {.clock = &clock, .front = front, .links = std::move(links), .on_ready = [&doctor] {
                   if (doctor) doctor->release();
                 }});
  // Read on each scrape, on the HTTP thread (podnet/pod_metrics.h).
  // Cross-checked with kubelet's pod-resources where kubelet is there (the CNI's state alone
  // otherwise); a slow kubelet costs a scrape at most the deadline.
  podnet::PodSeams pod_seams;
  auto pod_resources = makePodResourcesSource(flags->kubelet_dir / "pod-resources" / "kubelet.sock",
                                              std::chrono::milliseconds(500), flags->driver_name);
  std::unique_ptr<podnet::PodMetrics> pods;
  if (flags->cni_state_dir != "off") {
    pod_seams = podnet::openPodSeams(flags->sysfs_root, [](const std::string& note) {
      logger(Component::kMetrics)->warn("pod metrics: {}", note);
    });
    pods = std::make_unique<podnet::PodMetrics>(
        podnet::PodMetricsOptions{.state_dir = flags->cni_state_dir}, pod_seams.deps(),
        pod_resources.get());
  }
  std::unique_ptr<HttpServer> http;
  if (!flags->metrics_addr.empty() && flags->metrics_addr != "off") {
    // The probes are answered on the server's thread at once; /metrics is rendered on its own,
    // shared by the scrapes that come together, and capped (http_server.h).
    HttpLimits limits = kHttpLimits;
    limits.render_max_age = flags->metrics_max_age;
    auto srv = HttpServer::start(
        flags->metrics_addr,
        [&](const std::string& path) {
          return probeResponse(
              path, {.metrics = metrics,
                     .doctor = doctor.get(),
                     .pods = pods.get(),
                     .heartbeat_age = clock.now() - daemon.heartbeat(),
                     .front_metrics =
                         dra.slices ? renderSliceMetrics(dra.slices->status()) : std::string(),
                     .ready = daemon.ready(),
                     .ready_note = dra.front ? dra.front->recoveryNote() : std::string()});
        },
        {"/metrics"}, limits);
    if (!srv.ok()) {
      logger(Component::kMetrics)->error("{}", srv.error().msg);
      return srv.error().code == ErrorCode::kInvalidConfig ? 1 : 2;
    }
    http = std::move(srv).value();
    logger(Component::kMetrics)->info("metrics listening on port {}", http->port());
  }
  const Status st = daemon.run();
  // Shutdown: the workers are all told to stop before any of them is waited for (in the
  // destructors below), so that their waits overlap instead of adding up: the HTTP server's
  // stop waits for a /metrics render in progress, a doctor run up to DoctorRunner::kStopGrace.
  if (doctor) doctor->requestStop();
  if (dra.slice_client) dra.slice_client->cancel();
  if (dra.event_client) dra.event_client->cancel();
  if (!st.ok()) {
    logger(Component::kServer)->error("{}", st.error().msg);
    return 2;
  }
  return 0;
}

}  // namespace rdmanet::dp
