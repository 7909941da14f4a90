// The doctor's machine-readable output (schema in render.h).
#include <map>
#include <nlohmann/json.hpp>

#include "common/json/json_dump.h"
#include "deviceplugin/doctor/counters.h"
#include "deviceplugin/doctor/render.h"

namespace rdmanet::doctor {

std::string renderJson(const DoctorReport& report) {
  using json = nlohmann::ordered_json;
  json j;
  j["verdict"] = verdictName(report.worst());
  j["exit_code"] = report.exitCode();
  std::map<Verdict, int> count;
  for (const auto& r : report.results) ++count[r.verdict];
  j["summary"] = json::object();
  for (Verdict v : {Verdict::kPass, Verdict::kWarn, Verdict::kFail, Verdict::kUnknown}) {
    j["summary"][std::string(verdictName(v))] = count[v];
  }
  j["checks"] = json::array();
  for (const auto& r : report.results) {
    json ev = json::object();
    for (const auto& e : r.evidence) ev[e.key] = e.value;
    j["checks"].push_back({{"check", r.check},
                           {"device", r.device},
                           {"verdict", verdictName(r.verdict)},
                           {"evidence", std::move(ev)},
                           {"remedy", r.remedy}});
  }
  const auto& m = report.matrix;
  json gpus = json::array(), nics = json::array(), dist = json::object();
  for (const auto& g : m.gpus) {
    gpus.push_back({{"label", g.label},
                    {"pci", g.pci},
                    {"numa_node", g.numa_node},
                    {"pcie_root", g.pcie_root}});
  }
  for (size_t i = 0; i < m.nics.size(); ++i) {
    const auto& n = m.nics[i];
    nics.push_back({{"label", n.label},
                    {"netdev", n.netdev},
                    {"pci", n.pci},
                    {"numa_node", n.numa_node},
                    {"pcie_root", n.pcie_root}});
    json row = json::object();
    for (size_t k = 0; k < m.gpus.size(); ++k) {
      row[m.gpus[k].label] = distanceName(m.cells[i][k]);
    }
    dist[n.label] = std::move(row);
  }
  j["matrix"] = {{"gpus", std::move(gpus)}, {"nics", std::move(nics)}, {"distance", dist}};
  json ports = json::object();
  for (const auto& [port, counters] : report.counters.ports) {
    json c = json::object();
    for (const auto& [name, v] : counters) c[name] = v;
    ports[port] = std::move(c);
  }
  j["counters"] = {{"taken_at", report.counters.taken_at}, {"ports", std::move(ports)}};
  if (report.has_baseline) j["baseline_taken_at"] = report.baseline_taken_at;
  j["deltas"] = json::array();
  for (const auto& d : report.deltas) {
    j["deltas"].push_back({{"port", d.port},
                           {"counter", d.counter},
                           {"class", counterClassName(d.cls)},
                           {"before", d.before},
                           {"after", d.after},
                           {"delta", d.delta()},
                           {"reset", d.reset}});
  }
  return dumpJson(j, 2) + "\n";
}

}  // namespace rdmanet::doctor
