#include "deviceplugin/daemon/flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <system_error>
#include <vector>

#include "common/cli/command_line.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p == text.data() || n < 0) return std::nullopt;
  const std::string_view unit(p, static_cast<size_t>(text.data() + text.size() - p));
  int64_t ms_per = 0;
  if (unit.empty() || unit == "s") {
    ms_per = 1000;
  } else if (unit == "ms") {
    ms_per = 1;
  } else if (unit == "m") {
    ms_per = int64_t{60} * 1000;
  } else if (unit == "h") {
    ms_per = int64_t{3600} * 1000;
  } else {
    return std::nullopt;
  }
  constexpr int64_t kDayMs = 86400 * 1000LL;
  if (n > kDayMs / ms_per) return std::nullopt;
  return std::chrono::milliseconds(n * ms_per);
}

namespace {

constexpr std::string_view kDescription =
    "Advertises RDMA-capable devices (SR-IOV VFs, shared HCA slots) to kubelet over the\n"
    "device plugin API v1beta1, with NUMA topology, event-driven health and NCCL hints.";

constexpr std::string_view kSubcommands =
    "Subcommands:\n"
    "  rdmanet-device-plugin doctor [--json] [--dot] [--baseline FILE] [--expect-mtu N]\n"
    "                        [--lossless-priority P] [--sysfs-root DIR]\n"
    "                        the node's pre-training network checklist, once (as\n"
    "                        rdmanet-doctor; exit 0 pass, 1 a check FAILed, 2 usage error);\n"
    "                        `doctor --help` for more\n"
    "  rdmanet-device-plugin doctor pods [--interval S] [--json] [--cni-state-dir DIR]\n"
    "                        each pod's RDMA counter rates, worst first, with verdicts\n"
    "                        (as rdmanet-doctor pods); `doctor pods --help` for more\n"
    "  rdmanet-device-plugin doctor preflight --image IMAGE --network [NS/]NAD ...\n"
    "                        the cross-node RDMA pre-flight through the Kubernetes API\n"
    "                        (as rdmanet-doctor preflight); `doctor preflight --help` for more";

CLI::Validator durationValidator() {
  return CLI::Validator(
      [](const std::string& v) {
        return parseDuration(v) ? std::string()
                                : fmt::format(
                                      "\"{}\" is not a duration (e.g. 60s, 500ms, 5m; 0 "
                                      "disables)",
                                      v);
      },
      "", "duration");
}

// A string-valued option stored through `set` once it has passed the non-empty check.
template <typename Set>
CLI::Option* pathOption(CLI::App& app, const std::string& name, Set set, const std::string& desc,
                        const std::string& type = "DIR") {
  return app.add_option_function<std::string>(name, set, desc)
      ->type_name(type)
      ->check(cli::nonEmpty());
}

// Every flag of rdmanet-device-plugin, in the order --help lists them. A new flag is one more
// entry here (and a field in Flags).
void defineFlags(CLI::App& app, Flags& f) {
  pathOption(
      app, "--config",
      [&f](const std::string& v) {
        // Absolute, so that hot reload can watch its directory ("pools.json" has none).
        std::error_code ec;
        f.config = fs::absolute(v, ec).lexically_normal();
        if (ec) throw CLI::ValidationError("--config", "cannot resolve " + v + ": " + ec.message());
      },
      "pool config (JSON, sriov-network-device-plugin / rdma-shared-dev-plugin\n"
      "format plus rdmanet keys); default: pools rdma/vf and rdma/shared.\n"
      "Changes are applied live (inotify, or SIGHUP).",
      "FILE");
  pathOption(
      app, "--kubelet-dir", [&f](const std::string& v) { f.kubelet_dir = v; },
      "kubelet root; sockets live in DIR/device-plugins (default /var/lib/kubelet)");
  pathOption(
      app, "--sysfs-root", [&f](const std::string& v) { f.sysfs_root = v; },
      "directory that plays \"/\" for sysfs reads (default /)");
  pathOption(
      app, "--devinfo-dir", [&f](const std::string& v) { f.devinfo_dir = v; },
      "device-info-spec files for Multus\n(default /var/run/k8s.cni.cncf.io/devinfo/dp)");
  pathOption(
      app, "--cdi-dir", [&f](const std::string& v) { f.cdi_dir = v; },
      "where CDI specs are written, with --cdi or --api dra (default /var/run/cdi)");
  cli::textOption(app, "--cni-state-dir", f.cni_state_dir,
                  "the rdmanet CNI's state directory, read on each scrape for the\n"
                  "rdmanet_pod_* series (default /var/lib/cni/rdmanet; \"off\" disables)",
                  "DIR");
  app.add_flag("--cdi", f.cdi, "name devices by CDI in Allocate and write the CDI specs");
  app.add_option("--metrics-addr", f.metrics_addr,
                 "[HOST]:PORT for /metrics, /healthz, /readyz\n(default :9109; \"off\" disables)")
      ->type_name("ADDR");
  app.add_option_function<std::string>(
         "--metrics-max-age", [&f](const std::string& v) { f.metrics_max_age = *parseDuration(v); },
         "a /metrics render serves every scrape that arrives within D of its\n"
         "start, so scrapes that come together cost one render; 0: only those\n"
         "that wait for it (default 1s)")
      ->type_name("D")
      ->check(durationValidator());
  cli::textOption(app, "--log-level", f.log_level,
                  "trace, debug, info, warn, error or off (default info)", "LEVEL");
  app.add_flag("--lldp,!--no-lldp", f.lldp,
               "learn each port's switch neighbour from LLDP and name its rail\n"
               "(the config's `rails` rule); needs CAP_NET_RAW (default on)");
  app.add_option("--resync-interval", f.resync_seconds,
                 "seconds between full rescans, a safety net behind events (default 30)")
      ->type_name("S")
      ->check(cli::intIn(1, 86400));
  app.add_option_function<std::string>(
         "--doctor-interval", [&f](const std::string& v) { f.doctor_interval = *parseDuration(v); },
         "run the node doctor's checks every D (e.g. 60s, 500ms, 5m) and export\n"
         "them on /metrics as rdmanet_doctor_check{check,device}; 0 disables\n(default 60s)")
      ->type_name("D")
      ->check(durationValidator());
  pathOption(
      app, "--check-config", [&f](const std::string& v) { f.check_config = v; },
      "validate FILE, print its pools and exit (0 valid, 1 invalid)", "FILE");
  pathOption(
      app, "--install-cni", [&f](const std::string& v) { f.install_cni = v; },
      "copy the `rdmanet` CNI binary installed next to this one into DIR\n"
      "atomically (temp file, fsync, rename) and exit: the chart's init container");
  app.add_option("--api", f.api,
                 "the kubelet API to serve: deviceplugin (v1beta1, default) or dra\n"
                 "(Dynamic Resource Allocation, resource.k8s.io/v1, Kubernetes >= 1.34)")
      ->type_name("API")
      ->check(CLI::IsMember({"deviceplugin", "dra"}));
  pathOption(
      app, "--dra-pod-devices-dir", [&f](const std::string& v) { f.dra_pod_devices_dir = v; },
      "with --api dra: record there each pod's claimed devices, so the rdmanet CNI\n"
      "finds them without a Multus that reads DRA claims (netconf draDevicesDir)");
  cli::textOption(app, "--driver-name", f.driver_name, "DRA driver name (default rdma.rdmanet.io)",
                  "NAME");
  cli::textOption(app, "--node-name", f.node_name,
                  "this node, the DRA pool name (default: $NODE_NAME; --api dra needs one)",
                  "NAME");
  pathOption(
      app, "--kubeconfig", [&f](const std::string& v) { f.kubeconfig = v; },
      "API server access for --api dra (default: the pod's service account)", "FILE");
  app.add_flag("--dra-device-metadata,!--no-dra-device-metadata", f.dra_device_metadata,
               "with --api dra: give each container a file naming its claimed devices\n"
               "and their attributes (KEP-5304), /var/run/kubernetes.io/\n"
               "dra-device-attributes/...; on by default, --no-dra-device-metadata: off");
  app.add_flag("--dra-allow-multiple-allocations", f.dra_allow_multiple_allocations,
               "publish shared pools' PFs with allowMultipleAllocations (KEP-5075;\n"
               "needs the DRAConsumableCapacity feature gate on the cluster)");
}

void makeApp(CLI::App& app, Flags& f) {
  app.name("rdmanet-device-plugin");
  app.description(std::string(kDescription));
  app.footer(std::string(kSubcommands));
  app.get_formatter()->column_width(24);
  cli::configure(app);
  defineFlags(app, f);
}

}  // namespace

std::string usage() { return cli::helpOf<Flags>(makeApp); }

Result<Flags> parseFlags(int argc, const char* const* argv) {
  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  return cli::parseInto<Flags>(args, makeApp);
}

}  // namespace rdmanet::dp
