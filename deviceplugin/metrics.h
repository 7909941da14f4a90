#pragma once
// Counters and gauges for /metrics (Prometheus text format 0.0.4).
// Thread-safe: gRPC handler threads, the daemon loop and the HTTP thread all touch it.
//
// Exposed series (label `resource` = "rdma/vf"):
//   rdmanet_dp_devices{resource,health}            gauge: pool devices by health
//   rdmanet_dp_registered{resource}                gauge: 1 once kubelet accepted the pool
//   rdmanet_dp_registrations_total{resource,result} counter: ok | refused | unavailable
//   rdmanet_dp_health_transitions_total{resource,to} counter: to = healthy | unhealthy
//   rdmanet_dp_allocations_total{resource,result}  counter: ok | error
//   rdmanet_dp_allocate_duration_seconds{resource} histogram of Allocate handling time
// and, with --api dra, per claim kubelet names (label `operation` = prepare | unprepare):
//   rdmanet_dra_claim_operations_total{operation,result}   counter: ok | error
//   rdmanet_dra_claim_operation_duration_seconds{operation} histogram of the time to answer it
//   rdmanet_dra_events_total{result}  counter: Events about failed prepares, by what became of
//                                     them: sent | repeat (folded into the next one) | dropped
//                                     (queue full) | failed (the API server refused or was slow)
// and, per port whose LLDP neighbour is known now (it goes with the neighbour's TTL):
//   rdmanet_port_lldp_neighbor_info{port,switch,switch_chassis_id,switch_port,rail}  gauge, 1

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "common/base/histogram.h"

namespace rdmanet::dp {

// One port's LLDP neighbour as rdmanet_port_lldp_neighbor_info shows it: the switch's system
// name, chassis and port IDs as LLDP gave them (lldp_frame.h), and the rail the config's rule
// names from them ("" for none).
struct PortNeighborInfo {
  std::string switch_name{};
  std::string chassis_id{};
  std::string port_id{};
  std::string rail{};
  bool operator==(const PortNeighborInfo&) const = default;
};

class Metrics {
 public:
  void setPoolDevices(const std::string& resource, size_t healthy, size_t unhealthy);
  // Forgets a pool's gauges (it was removed by a config reload); counters stay.
  void removePool(const std::string& resource);
  void setRegistered(const std::string& resource, bool registered);
  void countRegistration(const std::string& resource, std::string_view result);
  void countHealthTransition(const std::string& resource, bool to_healthy);
  void countAllocation(const std::string& resource, bool ok);
  void observeAllocateSeconds(const std::string& resource, double seconds);
  // One claim of a NodePrepareResources / NodeUnprepareResources call (`operation` "prepare" or
  // "unprepare"): its outcome and the seconds it took.
  void observeClaimOperation(std::string_view operation, bool ok, double seconds);
  // What became of one failed prepare's Event (see the series above).
  void countEvent(std::string_view result);
  // The ports' LLDP neighbours now, by port netdev: replaces the last set, so a port left out
  // (its neighbour expired or said TTL 0, or it is no longer a port) loses its series.
  void setPortNeighbors(std::map<std::string, PortNeighborInfo> by_port);

  std::string render() const;

 private:
  // Allocate touches no API: sub-millisecond. A claim's prepare GETs it from the API server
  // within kubelet's 45 s deadline (the client retries a slow or failing server).
  static constexpr std::array<double, 9> kAllocateBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                             0.005,  0.01,    0.05,   0.25};
  static constexpr std::array<double, 12> kClaimBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                           0.5,   1,    2.5,   5,    10,  30};
  struct PoolGauges {
    size_t healthy = 0, unhealthy = 0;
    bool registered = false;
  };
  using Key = std::pair<std::string, std::string>;  // resource, second label value

  mutable std::mutex mu_;
  std::map<std::string, PoolGauges> pools_;
  std::map<Key, uint64_t> registrations_, transitions_, allocations_;
  std::map<std::string, Histogram> allocate_seconds_;
  std::map<Key, uint64_t> claim_operations_;  // operation, result
  std::map<std::string, Histogram> claim_seconds_;
  std::map<std::string, uint64_t, std::less<>> events_;
  std::map<std::string, PortNeighborInfo> neighbors_;  // by port netdev
};

}  // namespace rdmanet::dp
