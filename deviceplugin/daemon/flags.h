#pragma once
// Command line of rdmanet-device-plugin, parsed with CLI11 (common/cli/command_line.h: every
// flag takes "--flag VALUE" or "--flag=VALUE"; errors name the flag). The flags are defined in
// one table in flags.cc (defineFlags), which also generates --help.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet::dp {

struct Flags {
  std::filesystem::path config{};  // empty: built-in default pools
  std::filesystem::path kubelet_dir = "/var/lib/kubelet";
  std::filesystem::path sysfs_root = "/";
  std::filesystem::path devinfo_dir = "/var/run/k8s.cni.cncf.io/devinfo/dp";
  std::filesystem::path cdi_dir = "/var/run/cdi";
  bool cdi = false;
  // The CNI's attachment state, the source of the rdmanet_pod_* series; "off": none.
  std::string cni_state_dir = "/var/lib/cni/rdmanet";
  std::string metrics_addr = ":9109";  // "" or "off": no metrics server
  // A /metrics render serves the scrapes that arrive within this of its start (http_server.h).
  std::chrono::milliseconds metrics_max_age{std::chrono::seconds(1)};
  std::string log_level = "info";
  int resync_seconds = 30;
  bool lldp = true;                      // learn each port's switch neighbour (and rail) from LLDP
  std::filesystem::path check_config{};  // validate this file, print the pools, exit
  std::filesystem::path install_cni{};   // copy the sibling `rdmanet` binary into DIR, exit
  // Period of the node doctor's checks exported on /metrics; 0 disables them.
  std::chrono::milliseconds doctor_interval{std::chrono::seconds(60)};
  bool help = false;     // --help: print usage() and exit 0
  bool version = false;  // --version: print cli::version() and exit 0
  // Which kubelet API the daemon serves (issue 12): "deviceplugin" (v1beta1) or "dra".
  std::string api = "deviceplugin";
  // DRA only.
  std::string driver_name = "rdma.rdmanet.io";
  std::string node_name{};             // empty: $NODE_NAME (the daemon fails without either)
  std::filesystem::path kubeconfig{};  // empty: in-cluster service account
  bool dra_allow_multiple_allocations = false;  // shared pools' PFs: KEP-5075
  // Where prepare records each pod's claimed devices for the CNI (dra/kubelet/pod_devices.h); none
  // when empty.
  std::filesystem::path dra_pod_devices_dir{};
  // Device metadata for the container (KEP-5304, dra/kubelet/device_metadata.h). On by default:
  // it is a read-only file bind-mounted by CDI, which every runtime that runs DRA devices
  // applies whatever the Kubernetes version, and a container that does not read it is unchanged.
  bool dra_device_metadata = true;
};

// Error 7 naming the flag for an unknown flag, a missing value or a bad value.
Result<Flags> parseFlags(int argc, const char* const* argv);
// The generated --help text: every flag with its default, and the doctor subcommand.
std::string usage();

// "90s", "500ms", "5m", "1h", or a bare number of seconds; "0" is allowed (disabled). nullopt
// for anything else, negative values and more than a day.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);

}  // namespace rdmanet::dp
