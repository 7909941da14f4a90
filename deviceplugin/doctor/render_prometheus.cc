// The doctor's results as Prometheus gauges, for the device plugin's /metrics.
#include <fmt/format.h>

#include "deviceplugin/doctor/counters.h"
#include "deviceplugin/doctor/render.h"

namespace rdmanet::doctor {
namespace {

// Label values escape backslash, double quote and newline (exposition format 0.0.4).
std::string esc(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string renderPrometheus(const DoctorReport& report) {
  std::string out =
      "# HELP rdmanet_doctor_check Node doctor check result: 0 pass, 1 warn, 2 fail, 3 unknown.\n"
      "# TYPE rdmanet_doctor_check gauge\n";
  for (const auto& r : report.results) {
    out += fmt::format("rdmanet_doctor_check{{check=\"{}\",device=\"{}\"}} {}\n", esc(r.check),
                       esc(r.device), static_cast<int>(r.verdict));
  }
  out +=
      "# HELP rdmanet_doctor_rdma_counter RDMA port error, retransmit and congestion counters.\n"
      "# TYPE rdmanet_doctor_rdma_counter counter\n";
  for (const auto& [port, counters] : report.counters.ports) {
    for (const auto& [name, v] : counters) {
      const auto cls = classifyCounter(name);
      if (!cls) continue;
      out +=
          fmt::format("rdmanet_doctor_rdma_counter{{port=\"{}\",counter=\"{}\",class=\"{}\"}} {}\n",
                      esc(port), esc(name), counterClassName(*cls), v);
    }
  }
  if (!report.has_baseline) return out;
  out +=
      "# HELP rdmanet_doctor_counter_delta Growth of an RDMA port counter since the previous "
      "doctor run (0 after a reset).\n"
      "# TYPE rdmanet_doctor_counter_delta gauge\n";
  for (const auto& d : report.deltas) {
    out +=
        fmt::format("rdmanet_doctor_counter_delta{{port=\"{}\",counter=\"{}\",class=\"{}\"}} {}\n",
                    esc(d.port), esc(d.counter), counterClassName(d.cls), d.delta());
  }
  return out;
}

}  // namespace rdmanet::doctor
