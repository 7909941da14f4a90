#include "deviceplugin/metrics.h"

#include "common/base/prometheus_text.h"

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

namespace {

void counterFamily(PrometheusText& out, std::string_view name, std::string_view help,
                   std::string_view label,
                   const std::map<std::pair<std::string, std::string>, uint64_t>& values) {
  out.family(name, "counter", help);
  for (const auto& [k, v] : values) out.sample(name, {{"resource", k.first}, {label, k.second}}, v);
}

}  // namespace

std::string Metrics::render() const {
  std::lock_guard lock(mu_);
  PrometheusText out;
  out.family("rdmanet_dp_devices", "gauge", "Devices advertised per pool, by health.");
  for (const auto& [r, g] : pools_) {
    out.sample("rdmanet_dp_devices", {{"resource", r}, {"health", "healthy"}}, g.healthy);
    out.sample("rdmanet_dp_devices", {{"resource", r}, {"health", "unhealthy"}}, g.unhealthy);
  }
  out.family("rdmanet_dp_registered", "gauge", "Whether kubelet accepted the pool's registration.");
  for (const auto& [r, g] : pools_) {
    out.sample("rdmanet_dp_registered", {{"resource", r}}, g.registered ? 1 : 0);
  }
  counterFamily(out, "rdmanet_dp_registrations_total", "Registration attempts by result.", "result",
                registrations_);
  counterFamily(out, "rdmanet_dp_health_transitions_total", "Device health changes.", "to",
                transitions_);
  counterFamily(out, "rdmanet_dp_allocations_total", "Allocate container requests by result.",
                "result", allocations_);
  out.family("rdmanet_dp_allocate_duration_seconds", "histogram",
             "Time to handle one Allocate call.");
  for (const auto& [r, h] : allocate_seconds_) {
    out.histogram("rdmanet_dp_allocate_duration_seconds", {{"resource", r}}, kBuckets, h.buckets,
                  h.count, h.sum);
  }
  return std::move(out).str();
}

}  // namespace rdmanet::dp
