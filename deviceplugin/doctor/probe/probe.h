#pragma once
// `rdmanet-doctor probe`: the pre-training checklist's end-to-end RDMA test as a built-in tool,
// on librdmacm (address and route resolution, the RoCE v2 GID the CM picks) and an RC queue pair:
//
//   rdmanet-doctor probe --listen [--bind ADDR] [--port P] [--device D] [--once]
//   rdmanet-doctor probe ADDR [--bind ADDR] [--port P] [--device D] [--tos T] [--dscp D]
//                        [--priority P] [--count N] [--bandwidth] [--timeout-ms MS] [--json]
//   either form: [--exchange cm|tcp] [--gid-index N] [--interface IF] [--wait-device S]
//   client only: [--mtu-sweep] [--summary-file PATH]
//
// Two ways to connect (--exchange):
//   cm   librdmacm resolves the peer's address to a route, a GID and a device (rping's way);
//   tcp  the two ends swap QP number, PSN, GID and MTU over a TCP connection on the interface,
//        and the QP is brought up by hand with the device's RoCE v2 GID (probe_exchange.h): the
//        way NCCL and perftest connect, so the probe walks the path the job will. It also works
//        where rdma_cm cannot see the RDMA address from the caller's netns (a Soft-RoCE device
//        made over a slave of the pod's interface in the node's netns).
// --mtu-sweep finds the largest IP packet that crosses to the peer and back (UDP with DF set, to
// the server's echo on the same port): the path MTU, and the RoCE MTU that fits in it.
// --summary-file writes the verdict as one compact JSON object (under 4 KiB: what kubelet keeps
// of a container's termination message), for the cross-node pre-flight.
//
// The client ping-pongs N small SENDs (RTT p50/p99), optionally streams RDMA WRITEs (Gbit/s
// against the port's rate, PASS at >= 90 %: the chapter's ib_write_bw threshold), and reports the
// GID index, traffic class and service level its QP actually uses (ibv_query_qp's address
// vector) against the pool's lossless DSCP (--dscp, the TOS' upper six bits) and priority.
// Every wait has a deadline (--timeout-ms per stage): a dead or unreachable peer is a FAIL with
// the stage and the CM event or completion status as evidence, never a hang.
// Exit: 0 PASS, 1 FAIL, 2 usage error. The server serves one client at a time until killed
// (--once: one client, then exit 0).
//
// This header is the pure part (options, judgement, rendering), unit-tested; probe_rdma.h holds
// the RDMA part.

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::doctor {

struct ProbeOptions {
  bool listen = false;
  bool once = false;
  std::string peer{};        // client: the server's address
  std::string bind{};        // client: source address; server: listen address (empty: any)
  int port = 18515;          // the rdma_cm service port
  std::string device{};      // the RDMA device that must carry the connection (empty: any)
  std::optional<int> tos{};  // client: IP TOS of the connection; default dscp << 2
  int dscp = 26;             // the pool's RoCE DSCP
  int priority = 3;          // the pool's lossless 802.1p priority
  int count = 1000;          // ping-pong messages
  bool bandwidth = false;
  int timeout_ms = 5000;  // per stage (resolution, connection, each message, the write phase)
  bool json = false;
  std::string exchange = "cm";  // "cm" or "tcp" (see above)
  int gid_index = -1;           // tcp: the GID index to use; -1: the device's RoCE v2 GID
  std::string interface {};     // tcp: the interface the device is for (empty: eth1 if any)
  int wait_device_s = 0;        // wait this long for the RDMA device to appear
  bool mtu_sweep = false;
  std::string summary_file{};
  bool help = false;
  bool version = false;

  int effectiveTos() const { return tos.value_or(dscp << 2); }
};

// The generated --help text (probe_args.cc, CLI11 as every rdmanet command line).
std::string probeUsage();
// args excludes "probe". Error 7 whose message starts with the flag it is about.
Result<ProbeOptions> parseProbeArgs(const std::vector<std::string>& args);

// What a client run found. Fields the run did not reach stay at their defaults.
struct ProbeReport {
  std::string peer{};
  std::string device{};
  int port_num = 0;
  int gid_index = -1;
  std::string gid{};
  int traffic_class = -1;  // the QP's GRH traffic class (the IP TOS on the wire)
  int sl = -1;
  int expected_dscp = 0;
  int expected_priority = 0;
  int requested_tos = 0;
  std::vector<double> rtt_us{};  // one per completed ping-pong
  int count = 0;                 // asked for
  bool bandwidth_run = false;
  double gbps = 0;
  double port_gbps = 0;  // 0: unknown
  uint64_t bytes = 0;
  // --mtu-sweep and the tcp exchange: interface MTUs at both ends and what crossed between them
  // (IP packet bytes); 0: not measured.
  int local_mtu = 0;
  int peer_mtu = 0;
  bool mtu_run = false;
  int path_mtu = 0;
  int roce_mtu = 0;  // the largest RoCE MTU whose packets fit in path_mtu (0: none)
  // The device port's hw_counters that moved during the run (tcp exchange).
  std::map<std::string, uint64_t> counters_delta{};
  std::string failed_stage{};  // "resolve address", "connect", "ping", "write", ...
  std::string error{};

  // Filled by judgeProbe.
  bool pass = false;
  std::vector<std::string> problems{};
};

inline constexpr double kBandwidthThreshold = 0.9;

// A client run's report before it runs: what the options ask for (peer, expected DSCP and
// priority, requested TOS, count), the same for both exchanges.
ProbeReport clientReport(const ProbeOptions& o);

// p in [0,100], nearest rank; 0 for no samples.
double percentile(std::vector<double> samples, double p);
// Sets pass and problems: a failed stage, fewer RTTs than asked, a traffic class whose DSCP is
// not the pool's, bandwidth below 90 % of a known port rate. An SL other than the priority is
// noted, not failed: on RoCE the wire priority comes from the VLAN QoS or the DSCP trust map.
void judgeProbe(ProbeReport& r);
std::string renderProbeJson(const ProbeReport& r);
std::string renderProbeTable(const ProbeReport& r);
// The --summary-file object: {"v":1,"pass","problems","failed_stage","error","device",
// "gid_index","traffic_class","sl","rtt_p50_us","rtt_p99_us","rtt_max_us","rtts","count","gbps",
// "port_gbps","local_mtu","peer_mtu","path_mtu","roce_mtu","counters_delta":{name: n}}, on one
// line, cut to stay under kSummaryMaxBytes (problems and counters first to go).
inline constexpr size_t kSummaryMaxBytes = 4000;
std::string renderProbeSummary(const ProbeReport& r);

// The whole subcommand: parses, runs client or server (probe_rdma.h), prints; returns the exit
// code.
int runProbeCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace rdmanet::doctor
