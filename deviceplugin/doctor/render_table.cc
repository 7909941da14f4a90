// The doctor's readable output.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "deviceplugin/doctor/render.h"

namespace rdmanet::doctor {
namespace {

constexpr size_t kEvidenceWidth = 72;

std::string matrix(const DistanceMatrix& m) {
  if (m.nics.empty() && m.gpus.empty()) return "";
  size_t w = 6;
  for (const auto& n : m.nics) w = std::max(w, n.label.size() + 2);
  std::string out = "NIC x GPU distance (nvidia-smi topo -m classes)\n";
  out += fmt::format("{:<{}}", "", w);
  for (const auto& g : m.gpus) out += fmt::format("{:<6}", g.label);
  size_t wr = 11;  // "PCIE ROOT  "
  for (const auto& n : m.nics) wr = std::max(wr, n.pcie_root.size() + 2);
  out += fmt::format("NUMA  {:<{}}NETDEV\n", "PCIE ROOT", wr);
  for (size_t i = 0; i < m.nics.size(); ++i) {
    out += fmt::format("{:<{}}", m.nics[i].label, w);
    for (Distance d : m.cells[i]) out += fmt::format("{:<6}", distanceName(d));
    const std::string& root = m.nics[i].pcie_root;
    out += fmt::format("{:<6}{:<{}}{}\n", m.nics[i].numa_node, root.empty() ? "-" : root, wr,
                       m.nics[i].netdev);
  }
  for (const auto& g : m.gpus) {
    out += fmt::format("  {}: {} (NUMA {}, PCIe root {})\n", g.label, g.pci, g.numa_node,
                       g.pcie_root.empty() ? "-" : g.pcie_root);
  }
  out +=
      "  PIX = same PCIe switch, PXB = several switches, PHB = same root complex, NODE = same "
      "NUMA node, SYS = across sockets\n"
      "  PCIe root = resource.kubernetes.io/pcieRoot: a DRA claim pairs a NIC and a GPU with the "
      "same one\n\n";
  return out;
}

// Evidence as "k=v" items, wrapped onto continuation lines.
std::vector<std::string> evidenceLines(const CheckResult& r) {
  std::vector<std::string> lines(1);
  for (const auto& e : r.evidence) {
    const std::string item = e.key + "=" + e.value;
    if (!lines.back().empty() && lines.back().size() + 1 + item.size() > kEvidenceWidth) {
      lines.emplace_back();
    }
    if (!lines.back().empty()) lines.back() += " ";
    lines.back() += item;
  }
  return lines;
}

}  // namespace

std::string renderTable(const DoctorReport& report) {
  std::string out = matrix(report.matrix);
  size_t wc = 5, wd = 6;
  for (const auto& r : report.results) {
    wc = std::max(wc, r.check.size());
    wd = std::max(wd, r.device.size());
  }
  wc += 2;
  wd += 2;
  const size_t indent = wc + wd + 9;
  out += fmt::format("{:<{}}{:<{}}{:<9}{}\n", "CHECK", wc, "DEVICE", wd, "VERDICT", "EVIDENCE");
  std::map<Verdict, int> count;
  for (const auto& r : report.results) {
    ++count[r.verdict];
    const auto lines = evidenceLines(r);
    out += fmt::format("{:<{}}{:<{}}{:<9}{}\n", r.check, wc, r.device, wd, verdictName(r.verdict),
                       lines.front());
    for (size_t i = 1; i < lines.size(); ++i) out += fmt::format("{:{}}{}\n", "", indent, lines[i]);
    if (!r.remedy.empty()) out += fmt::format("{:{}}-> {}\n", "", indent, r.remedy);
  }
  out += fmt::format("\n{} checks: {} PASS, {} WARN, {} FAIL, {} UNKNOWN\n", report.results.size(),
                     count[Verdict::kPass], count[Verdict::kWarn], count[Verdict::kFail],
                     count[Verdict::kUnknown]);
  return out;
}

}  // namespace rdmanet::doctor
