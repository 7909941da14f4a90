#pragma once
// The probe's summary, as a client probe pod leaves it in its termination message
// (`rdmanet-device-plugin doctor probe ... --summary-file /dev/termination-log`):
//
//   {"v":1,"pass":bool,"problems":[string],"failed_stage":string,"error":string,
//    "device":string,"gid_index":int,"traffic_class":int,"sl":int,"rtt_p50_us":number,
//    "rtt_p99_us":number,"rtt_max_us":number,"rtts":int,"count":int,"gbps":number,
//    "port_gbps":number,"local_mtu":int,"peer_mtu":int,"path_mtu":int,"roce_mtu":int,
//    "counters_delta":{"name":uint}}
//
// A missing field was not measured (nullopt here). Unknown keys are ignored, so a newer probe
// still reads; a known key of the wrong type is an error naming it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet::doctor::preflight {

struct ProbeSummary {
  int version = 1;
  bool pass = false;
  std::vector<std::string> problems{};
  std::string failed_stage{};
  std::string error{};
  std::string device{};
  std::optional<int> gid_index{};
  std::optional<int> traffic_class{};
  std::optional<int> sl{};
  std::optional<double> rtt_p50_us{};
  std::optional<double> rtt_p99_us{};
  std::optional<double> rtt_max_us{};
  std::optional<int> rtts{};
  std::optional<int> count{};
  std::optional<double> gbps{};
  std::optional<double> port_gbps{};
  std::optional<int> local_mtu{};  // the client's eth1
  std::optional<int> peer_mtu{};   // the server's eth1
  std::optional<int> path_mtu{};   // the largest IP packet that crossed (0: not measured)
  std::optional<int> roce_mtu{};   // the largest RoCE MTU that fits in it (0: none)
  std::map<std::string, uint64_t> counters_delta{};  // the client's port counters that grew
};

// Error 6 when `text` is not JSON (or empty), 7 when it is not an object or a key has the wrong
// type or range ("\"rtt_p99_us\" must be a number").
Result<ProbeSummary> parseProbeSummary(std::string_view text);

}  // namespace rdmanet::doctor::preflight
