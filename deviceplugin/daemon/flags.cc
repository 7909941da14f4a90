#include "deviceplugin/daemon/flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace rdmanet::dp {

std::string usage() {
  return R"(Usage: rdmanet-device-plugin [flags]

Advertises RDMA-capable devices (SR-IOV VFs, shared HCA slots) to kubelet over the
device plugin API v1beta1, with NUMA topology, event-driven health and NCCL hints.

Flags:
  --config FILE         pool config (JSON, sriov-network-device-plugin / rdma-shared-dev-plugin
                        format plus rdmanet keys); default: pools rdma/vf and rdma/shared.
                        Changes are applied live (inotify, or SIGHUP).
  --kubelet-dir DIR     kubelet root; sockets live in DIR/device-plugins (default /var/lib/kubelet)
  --sysfs-root DIR      directory that plays "/" for sysfs reads (default /)
  --devinfo-dir DIR     device-info-spec files for Multus (default /var/run/k8s.cni.cncf.io/devinfo/dp)
  --cdi-dir DIR         where CDI specs are written, with --cdi or --api dra (default /var/run/cdi)
  --cdi                 name devices by CDI in Allocate and write the CDI specs
  --metrics-addr ADDR   [HOST]:PORT for /metrics, /healthz, /readyz (default :9109; "off" disables)
  --log-level LEVEL     trace, debug, info, warn, error or off (default info)
  --resync-interval S   seconds between full rescans, a safety net behind events (default 30)
  --doctor-interval D   run the node doctor's checks every D (e.g. 60s, 500ms, 5m) and export
                        them on /metrics as rdmanet_doctor_check{check,device}; 0 disables
                        (default 60s)
  --check-config FILE   validate FILE, print its pools and exit (0 valid, 1 invalid)
  --install-cni DIR     copy the `rdmanet` CNI binary installed next to this one into DIR
                        atomically (temp file, fsync, rename) and exit: the chart's init container
  --api API             the kubelet API to serve: deviceplugin (v1beta1, default) or dra
                        (Dynamic Resource Allocation, resource.k8s.io/v1, Kubernetes >= 1.34)
  --driver-name NAME    DRA driver name (default rdma.rdmanet.io)
  --node-name NAME      this node, the DRA pool name (default: $NODE_NAME; --api dra needs one)
  --kubeconfig FILE     API server access for --api dra (default: the pod's service account)
  --dra-allow-multiple-allocations
                        publish shared pools' PFs with allowMultipleAllocations (KEP-5075; needs
                        the DRAConsumableCapacity feature gate on the cluster)
  --help                this text

Subcommands:
  rdmanet-device-plugin doctor [--json] [--dot] [--baseline FILE] [--expect-mtu N]
                        [--lossless-priority P] [--sysfs-root DIR]
                        the node's pre-training network checklist, once (as rdmanet-doctor;
                        exit 0 pass, 1 a check FAILed, 2 usage error); `doctor --help` for more
)";
}

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
    ms_per = 60 * 1000;
  } else if (unit == "h") {
    ms_per = 3600 * 1000;
  } else {
    return std::nullopt;
  }
  constexpr int64_t kDayMs = 86400 * 1000LL;
  if (n > kDayMs / ms_per) return std::nullopt;
  return std::chrono::milliseconds(n * ms_per);
}

namespace {

Error bad(std::string_view flag, std::string_view what) {
  return makeError(ErrorCode::kInvalidConfig, fmt::format("{}: {}", flag, what));
}

}  // namespace

Result<Flags> parseFlags(int argc, const char* const* argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!arg.starts_with("--")) return bad(arg, "unexpected argument (flags start with --)");
    std::string_view name = arg, value;
    bool has_value = false;
    if (auto eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (name == "--help" || name == "-h") {
      f.help = true;
      continue;
    }
    if (name == "--cdi") {
      if (has_value && value != "true" && value != "false") return bad(name, "expects true|false");
      f.cdi = !has_value || value == "true";
      continue;
    }
    if (name == "--dra-allow-multiple-allocations") {
      if (has_value && value != "true" && value != "false") return bad(name, "expects true|false");
      f.dra_allow_multiple_allocations = !has_value || value == "true";
      continue;
    }
    static constexpr std::string_view kValued[] = {
        "--config",          "--kubelet-dir",  "--sysfs-root",      "--devinfo-dir",
        "--cdi-dir",         "--metrics-addr", "--log-level",       "--check-config",
        "--resync-interval", "--install-cni",  "--doctor-interval", "--api",
        "--driver-name",     "--node-name",    "--kubeconfig"};
    if (std::find(std::begin(kValued), std::end(kValued), name) == std::end(kValued)) {
      return bad(name, "unknown flag (see --help)");
    }
    if (!has_value) {
      if (i + 1 >= argc) return bad(name, "needs a value");
      value = argv[++i];
    }
    if (value.empty() && name != "--metrics-addr") return bad(name, "empty value");
    if (name == "--config") {
      // Absolute, so that hot reload can watch its directory ("pools.json" has none).
      std::error_code ec;
      f.config = std::filesystem::absolute(value, ec).lexically_normal();
      if (ec) return bad(name, fmt::format("cannot resolve {}: {}", value, ec.message()));
    } else if (name == "--kubelet-dir") {
      f.kubelet_dir = value;
    } else if (name == "--sysfs-root") {
      f.sysfs_root = value;
    } else if (name == "--devinfo-dir") {
      f.devinfo_dir = value;
    } else if (name == "--cdi-dir") {
      f.cdi_dir = value;
    } else if (name == "--metrics-addr") {
      f.metrics_addr = value;
    } else if (name == "--log-level") {
      f.log_level = value;
    } else if (name == "--check-config") {
      f.check_config = value;
    } else if (name == "--install-cni") {
      f.install_cni = value;
    } else if (name == "--doctor-interval") {
      auto d = parseDuration(value);
      if (!d) {
        return bad(
            name, fmt::format("\"{}\" is not a duration (e.g. 60s, 500ms, 5m; 0 disables)", value));
      }
      f.doctor_interval = *d;
    } else if (name == "--api") {
      if (value != "deviceplugin" && value != "dra") {
        return bad(name, fmt::format("\"{}\" is not deviceplugin or dra", value));
      }
      f.api = value;
    } else if (name == "--driver-name") {
      f.driver_name = value;
    } else if (name == "--node-name") {
      f.node_name = value;
    } else if (name == "--kubeconfig") {
      f.kubeconfig = value;
    } else if (name == "--resync-interval") {
      int n = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || p != value.data() + value.size() || n < 1 || n > 86400) {
        return bad(name, fmt::format("\"{}\" is not a number of seconds (1-86400)", value));
      }
      f.resync_seconds = n;
    } else {
      return bad(name, "unknown flag (see --help)");
    }
  }
  return f;
}

}  // namespace rdmanet::dp
