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

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace rdmanet::dp {

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

  std::string render() const;

 private:
  static constexpr std::array<double, 9> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                     0.005,  0.01,    0.05,   0.25};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  struct PoolGauges {
    size_t healthy = 0, unhealthy = 0;
    bool registered = false;
  };
  using Key = std::pair<std::string, std::string>;  // resource, second label value

  mutable std::mutex mu_;
  std::map<std::string, PoolGauges> pools_;
  std::map<Key, uint64_t> registrations_, transitions_, allocations_;
  std::map<std::string, Histogram> allocate_seconds_;
};

}  // namespace rdmanet::dp
