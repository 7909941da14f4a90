#include "deviceplugin/metrics.h"

#include <fmt/format.h>

namespace rdmanet::dp {

void Metrics::setPoolDevices(const std::string& resource, size_t healthy, size_t unhealthy) {
  std::lock_guard lock(mu_);
  auto& g = pools_[resource];
  g.healthy = healthy;
  g.unhealthy = unhealthy;
}

void Metrics::removePool(const std::string& resource) {
  std::lock_guard lock(mu_);
  pools_.erase(resource);
}

void Metrics::setRegistered(const std::string& resource, bool registered) {
  std::lock_guard lock(mu_);
  pools_[resource].registered = registered;
}

void Metrics::countRegistration(const std::string& resource, std::string_view result) {
  std::lock_guard lock(mu_);
  ++registrations_[{resource, std::string(result)}];
}

void Metrics::countHealthTransition(const std::string& resource, bool to_healthy) {
  std::lock_guard lock(mu_);
  ++transitions_[{resource, to_healthy ? "healthy" : "unhealthy"}];
}

void Metrics::countAllocation(const std::string& resource, bool ok) {
  std::lock_guard lock(mu_);
  ++allocations_[{resource, ok ? "ok" : "error"}];
}

void Metrics::observeAllocateSeconds(const std::string& resource, double seconds) {
  std::lock_guard lock(mu_);
  Histogram& h = allocate_seconds_[resource];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

bool Metrics::ready() const {
  std::lock_guard lock(mu_);
  if (pools_.empty()) return false;
  for (const auto& [_, g] : pools_) {
    if (!g.registered) return false;
  }
  return true;
}

namespace {

void counterFamily(std::string& out, std::string_view name, std::string_view help,
                   std::string_view label,
                   const std::map<std::pair<std::string, std::string>, uint64_t>& values) {
  out += fmt::format("# HELP {} {}\n# TYPE {} counter\n", name, help, name);
  for (const auto& [k, v] : values) {
    out += fmt::format("{}{{resource=\"{}\",{}=\"{}\"}} {}\n", name, k.first, label, k.second, v);
  }
}

}  // namespace

std::string Metrics::render() const {
  std::lock_guard lock(mu_);
  std::string out;
  out +=
      "# HELP rdmanet_dp_devices Devices advertised per pool, by health.\n"
      "# TYPE rdmanet_dp_devices gauge\n";
  for (const auto& [r, g] : pools_) {
    out +=
        fmt::format("rdmanet_dp_devices{{resource=\"{}\",health=\"healthy\"}} {}\n", r, g.healthy);
    out += fmt::format("rdmanet_dp_devices{{resource=\"{}\",health=\"unhealthy\"}} {}\n", r,
                       g.unhealthy);
  }
  out +=
      "# HELP rdmanet_dp_registered Whether kubelet accepted the pool's registration.\n"
      "# TYPE rdmanet_dp_registered gauge\n";
  for (const auto& [r, g] : pools_) {
    out += fmt::format("rdmanet_dp_registered{{resource=\"{}\"}} {}\n", r, g.registered ? 1 : 0);
  }
  counterFamily(out, "rdmanet_dp_registrations_total", "Registration attempts by result.", "result",
                registrations_);
  counterFamily(out, "rdmanet_dp_health_transitions_total", "Device health changes.", "to",
                transitions_);
  counterFamily(out, "rdmanet_dp_allocations_total", "Allocate container requests by result.",
                "result", allocations_);
  out +=
      "# HELP rdmanet_dp_allocate_duration_seconds Time to handle one Allocate call.\n"
      "# TYPE rdmanet_dp_allocate_duration_seconds histogram\n";
  for (const auto& [r, h] : allocate_seconds_) {
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out += fmt::format(
          "rdmanet_dp_allocate_duration_seconds_bucket{{resource=\"{}\",le=\"{}\"}} {}\n", r,
          kBuckets[i], h.buckets[i]);
    }
    out += fmt::format(
        "rdmanet_dp_allocate_duration_seconds_bucket{{resource=\"{}\",le=\"+Inf\"}} {}\n", r,
        h.count);
    out +=
        fmt::format("rdmanet_dp_allocate_duration_seconds_sum{{resource=\"{}\"}} {}\n", r, h.sum);
    out += fmt::format("rdmanet_dp_allocate_duration_seconds_count{{resource=\"{}\"}} {}\n", r,
                       h.count);
  }
  return out;
}

}  // namespace rdmanet::dp
