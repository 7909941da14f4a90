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
  allocate_seconds_.try_emplace(resource, kAllocateBuckets).first->second.observe(seconds);
}

void Metrics::observeClaimOperation(std::string_view operation, bool ok, double seconds) {
  std::lock_guard lock(mu_);
  ++claim_operations_[{std::string(operation), ok ? "ok" : "error"}];
  claim_seconds_.try_emplace(std::string(operation), kClaimBuckets).first->second.observe(seconds);
}

void Metrics::countEvent(std::string_view result) {
  std::lock_guard lock(mu_);
  auto it = events_.find(result);
  if (it == events_.end()) it = events_.emplace(std::string(result), 0).first;
  ++it->second;
}

void Metrics::setPortNeighbors(std::map<std::string, PortNeighborInfo> by_port) {
  std::lock_guard lock(mu_);
  neighbors_ = std::move(by_port);
}

namespace {

void counterFamily(PrometheusText& out, std::string_view name, std::string_view help,
                   std::string_view label,
                   const std::map<std::pair<std::string, std::string>, uint64_t>& values,
                   std::string_view first_label = "resource") {
  out.family(name, "counter", help);
  for (const auto& [k, v] : values)
    out.sample(name, {{first_label, k.first}, {label, k.second}}, v);
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
    h.write(out, "rdmanet_dp_allocate_duration_seconds", {{"resource", r}});
  }
  // The DRA series only where DRA served a claim: a device-plugin node has none.
  if (!claim_operations_.empty()) {
    counterFamily(out, "rdmanet_dra_claim_operations_total",
                  "DRA claims prepared or unprepared, by result.", "result", claim_operations_,
                  "operation");
    out.family("rdmanet_dra_claim_operation_duration_seconds", "histogram",
               "Time to prepare or unprepare one DRA claim.");
    for (const auto& [op, h] : claim_seconds_) {
      h.write(out, "rdmanet_dra_claim_operation_duration_seconds", {{"operation", op}});
    }
  }
  if (!events_.empty()) {
    out.family("rdmanet_dra_events_total", "counter",
               "Events about failed prepares, by what became of them.");
    for (const auto& [result, n] : events_) {
      out.sample("rdmanet_dra_events_total", {{"result", result}}, n);
    }
  }
  out.family("rdmanet_port_lldp_neighbor_info", "gauge",
             "The switch port each port is cabled to, from LLDP, with its rail; 1 while known.");
  for (const auto& [port, n] : neighbors_) {
    out.sample("rdmanet_port_lldp_neighbor_info",
               {{"port", port},
                {"switch", n.switch_name},
                {"switch_chassis_id", n.chassis_id},
                {"switch_port", n.port_id},
                {"rail", n.rail}},
               1);
  }
  return std::move(out).str();
}

}  // namespace rdmanet::dp
