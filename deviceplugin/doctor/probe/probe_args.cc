// `rdmanet-doctor probe`'s command line, on the project's CLI11 conventions
// (common/cli/command_line.h): generated --help, --version, errors naming the flag.
#include <string>
#include <vector>

#include "common/cli/command_line.h"
#include "common/inventory/netdev.h"
#include "deviceplugin/doctor/probe/probe.h"

namespace rdmanet::doctor {
namespace {

constexpr const char* kDescription =
    "  rdmanet-doctor probe --listen [--bind ADDR] [--port P] [--device D] [--once]\n"
    "  rdmanet-doctor probe ADDR [--bind ADDR] [--port P] [--device D] [--tos T]\n"
    "                       [--dscp D] [--priority P] [--count N] [--bandwidth]\n"
    "                       [--timeout-ms MS] [--json] [--mtu-sweep] [--summary-file PATH]\n"
    "  either: [--exchange cm|tcp] [--gid-index N] [--interface IF] [--wait-device S]\n"
    "RDMA ping-pong (RTT p50/p99) and optional RDMA-write bandwidth (>= 90% of the port\n"
    "rate) over librdmacm and an RC QP, reporting the GID index, traffic class and SL used\n"
    "against the pool's DSCP (default 26) and priority (default 3). Exit 0 PASS, 1 FAIL,\n"
    "2 usage error.";

// An RDMA device name as the kernel allows it (IB_DEVICE_NAME_MAX is 64 with the NUL).
CLI::Validator deviceName() {
  return CLI::Validator(
      [](const std::string& v) {
        if (v.empty()) return std::string("empty value");
        return v.size() < 64 ? std::string() : std::string("longer than 63 characters");
      },
      "", "device name");
}

// Every flag of the probe, in --help's order.
void defineFlags(CLI::App& app, ProbeOptions& o) {
  app.name("rdmanet-doctor probe");
  app.description(kDescription);
  cli::configure(app);
  app.add_option("ADDR", o.peer, "client: the probe server's address")->type_name("");
  app.add_flag("--listen", o.listen, "serve probes, one client at a time until killed");
  app.add_flag("--once", o.once, "with --listen: serve one client, then exit 0");
  cli::textOption(app, "--bind", o.bind, "client: source address; server: listen address", "ADDR");
  app.add_option("--port", o.port, "the rdma_cm service port (default 18515)")
      ->type_name("P")
      ->check(cli::intIn(1, 65535));
  app.add_option("--device", o.device, "the RDMA device that must carry the connection")
      ->type_name("D")
      ->check(deviceName());
  app.add_option_function<int>(
         "--tos", [&o](const int& tos) { o.tos = tos; },
         "client: IP TOS of the connection (default DSCP << 2)")
      ->type_name("T")
      ->check(cli::intIn(0, 255));
  app.add_option("--dscp", o.dscp, "the pool's RoCE DSCP, 0-63 (default 26)")
      ->type_name("D")
      ->check(cli::intIn(0, 63));
  app.add_option("--priority", o.priority, "the pool's lossless 802.1p priority, 0-7 (default 3)")
      ->type_name("P")
      ->check(cli::intIn(0, 7));
  app.add_option("--count", o.count, "ping-pong messages (default 1000)")
      ->type_name("N")
      ->check(cli::intIn(1, 1000000));
  app.add_flag("--bandwidth", o.bandwidth, "also stream RDMA WRITEs and judge the Gbit/s");
  app.add_option("--timeout-ms", o.timeout_ms, "deadline of each stage (default 5000)")
      ->type_name("MS")
      ->check(cli::intIn(10, 600000));
  app.add_flag("--json", o.json, "print the report as JSON");
  app.add_option("--exchange", o.exchange,
                 "cm: librdmacm finds route and GID; tcp: QP details swapped over TCP on the "
                 "interface, the device's RoCE v2 GID used as NCCL does (default cm)")
      ->type_name("cm|tcp")
      ->check(CLI::IsMember({"cm", "tcp"}));
  app.add_option("--gid-index", o.gid_index,
                 "tcp: the GID index to use (default: the device's RoCE v2 GID of the interface)")
      ->type_name("N")
      ->check(cli::intIn(0, 65535));
  app.add_option("--interface", o.interface,
                 "tcp: the interface the RDMA device belongs to (default eth1 when present)")
      ->type_name("IF")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return isValidIfName(v) ? std::string() : std::string("not an interface name");
          },
          "", "interface name"));
  app.add_option("--wait-device", o.wait_device_s,
                 "wait up to S seconds for the RDMA device and its RoCE v2 GID (default 0)")
      ->type_name("S")
      ->check(cli::intIn(0, 3600));
  app.add_flag("--mtu-sweep", o.mtu_sweep,
               "client: find the largest packet that crosses to the peer (UDP echo, DF set)");
  app.add_option("--summary-file", o.summary_file,
                 "client: also write the verdict as one JSON object to PATH (e.g. "
                 "/dev/termination-log)")
      ->type_name("PATH")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return v.starts_with('/') && v.find('\0') == std::string::npos
                       ? std::string()
                       : std::string("not an absolute path");
          },
          "", "absolute path"));
}

}  // namespace

std::string probeUsage() { return cli::helpOf<ProbeOptions>(defineFlags); }

Result<ProbeOptions> parseProbeArgs(const std::vector<std::string>& args) {
  RDMANET_ASSIGN_OR_RETURN(ProbeOptions o, cli::parseInto<ProbeOptions>(args, defineFlags));
  if (o.help || o.version) return o;
  // The two forms, which CLI11's option groups cannot say with these messages.
  if (o.listen && !o.peer.empty()) {
    return makeError(ErrorCode::kInvalidConfig, "--listen takes no peer address");
  }
  if (!o.listen && o.peer.empty()) {
    return makeError(ErrorCode::kInvalidConfig, "give the server's address, or --listen");
  }
  if (!o.listen && o.once) return makeError(ErrorCode::kInvalidConfig, "--once is for --listen");
  if (o.listen && (o.mtu_sweep || !o.summary_file.empty())) {
    return makeError(ErrorCode::kInvalidConfig,
                     "--mtu-sweep and --summary-file are for the client (the server echoes the "
                     "sweep's packets on its own)");
  }
  if (o.exchange != "tcp" && o.gid_index >= 0) {
    return makeError(ErrorCode::kInvalidConfig,
                     "--gid-index is for --exchange tcp (rdma_cm picks the GID itself)");
  }
  if (o.exchange != "tcp" && (o.wait_device_s > 0 || !o.interface.empty())) {
    return makeError(ErrorCode::kInvalidConfig,
                     "--wait-device and --interface are for --exchange tcp (rdma_cm finds the "
                     "device from the address)");
  }
  return o;
}

}  // namespace rdmanet::doctor
