// The doctor's results as Prometheus gauges, for the device plugin's /metrics.
#include "common/base/prometheus_text.h"
#include "deviceplugin/doctor/counters.h"
#include "deviceplugin/doctor/render.h"

namespace rdmanet::doctor {

std::string renderPrometheus(const DoctorReport& report) {
  PrometheusText out;
  out.family("rdmanet_doctor_check", "gauge",
             "Node doctor check result: 0 pass, 1 warn, 2 fail, 3 unknown.");
  for (const auto& r : report.results) {
    out.sample("rdmanet_doctor_check", {{"check", r.check}, {"device", r.device}},
               static_cast<int>(r.verdict));
  }
  out.family("rdmanet_doctor_rdma_counter", "counter",
             "RDMA port error, retransmit and congestion counters.");
  for (const auto& [port, counters] : report.counters.ports) {
    for (const auto& [name, v] : counters) {
      const auto cls = classifyCounter(name);
      if (!cls) continue;
      out.sample("rdmanet_doctor_rdma_counter",
                 {{"port", port}, {"counter", name}, {"class", counterClassName(*cls)}}, v);
    }
  }
  if (!report.has_baseline) return std::move(out).str();
  out.family("rdmanet_doctor_counter_delta", "gauge",
             "Growth of an RDMA port counter since the previous doctor run (0 after a reset).");
  for (const auto& d : report.deltas) {
    out.sample("rdmanet_doctor_counter_delta",
               {{"port", d.port}, {"counter", d.counter}, {"class", counterClassName(d.cls)}},
               d.delta());
  }
  return std::move(out).str();
}

}  // namespace rdmanet::doctor
