// The node's PCIe/NUMA layout as Graphviz. A PCIe path alternates below the root port:
// switch upstream port, switch downstream port, (next switch's upstream, downstream, ...), so a
// bridge's role follows from its depth in the chain readPlacement() returns.
#include <fmt/format.h>

#include <map>
#include <set>

#include "deviceplugin/doctor/context.h"
#include "deviceplugin/doctor/render.h"

namespace rdmanet::doctor {
namespace {

std::string fill(std::optional<Verdict> v) {
  if (!v) return "white";
  switch (*v) {
    case Verdict::kPass:
      return "#d8f0d8";
    case Verdict::kWarn:
      return "#fff2b3";
    case Verdict::kFail:
      return "#f8c8c8";
    case Verdict::kUnknown:
      return "#e4e4e4";
  }
  return "white";
}

int rank(Verdict v) {
  return v == Verdict::kFail ? 3 : v == Verdict::kWarn ? 2 : v == Verdict::kUnknown ? 1 : 0;
}

// Worst verdict of the results about one device (a netdev/GPU label or an RDMA "dev/port").
std::optional<Verdict> worstFor(const DoctorReport* report, const std::vector<std::string>& names) {
  if (!report) return std::nullopt;
  std::optional<Verdict> w;
  for (const auto& r : report->results) {
    bool match = false;
    for (const auto& n : names) {
      match |= !n.empty() && (r.device == n || r.device.starts_with(n + "/"));
    }
    if (match && (!w || rank(r.verdict) > rank(*w))) w = r.verdict;
  }
  return w;
}

// Bridges an ACS check found redirecting.
std::set<std::string> redirectingBridges(const DoctorReport* report) {
  std::set<std::string> out;
  if (!report) return out;
  for (const auto* r : report->all("acs")) {
    for (const auto& e : r->evidence) {
      if (e.value.find("ReqRedir+") != std::string::npos ||
          e.value.find("CmpltRedir+") != std::string::npos) {
        out.insert(e.key);
      }
    }
  }
  return out;
}

struct Graph {
  // Per NUMA node (-1: unknown): node statements, and switch clusters (upstream -> statements).
  std::map<int, std::vector<std::string>> numa_nodes;
  std::map<int, std::map<std::string, std::vector<std::string>>> switches;
  std::set<std::string> declared;
  std::set<std::pair<std::string, std::string>> edges;
};

void addPath(Graph& g, const PciePlacement& pl, const std::string& leaf_id,
             const std::set<std::string>& acs_on) {
  const int numa = pl.numa_node;
  std::string parent;
  if (!pl.root_complex.empty()) {
    parent = "rc:" + pl.root_complex;
    if (g.declared.insert(parent).second) {
      g.numa_nodes[numa].push_back(
          fmt::format("\"{}\" [label=\"root complex\\n{}\", shape=invhouse, style=filled, "
                      "fillcolor=\"#dde6f5\"];",
                      parent, pl.root_complex));
    }
  }
  std::string upstream;
  for (size_t i = 0; i < pl.bridges.size(); ++i) {
    const std::string bdf = pl.bridges[i].str();
    const std::string id = "br:" + bdf;
    if (g.declared.insert(id).second) {
      const char* role = i == 0 ? "root port" : (i % 2 == 1 ? "switch upstream" : "downstream");
      const bool red = acs_on.count(bdf) > 0;
      std::string stmt = fmt::format("\"{}\" [label=\"{}\\n{}{}\", shape=ellipse, fontsize=10{}];",
                                     id, role, bdf, red ? "\\nACS redirect ON" : "",
                                     red ? ", style=filled, fillcolor=\"#f8c8c8\"" : "");
      if (i % 2 == 1) {
        g.switches[numa][bdf].insert(g.switches[numa][bdf].begin(), stmt);
      } else if (i >= 2) {
        g.switches[numa][upstream].push_back(stmt);
      } else {
        g.numa_nodes[numa].push_back(stmt);
      }
    }
    if (i % 2 == 1) upstream = bdf;
    if (!parent.empty()) g.edges.insert({parent, id});
    parent = id;
  }
  if (!parent.empty()) g.edges.insert({parent, leaf_id});
}

}  // namespace

std::string renderDot(const NodeInventory& inv, const DoctorReport* report) {
  std::vector<DataPort> ports;
  std::vector<GpuRef> gpus;
  collectDevices(inv, ports, gpus);
  const auto acs_on = redirectingBridges(report);
  Graph g;
  for (const auto& p : ports) {
    const std::string id = "dev:" + p.nic->pci.address.str();
    std::string label = p.label;
    if (p.rdma) label += " | " + p.rdma->name;
    label += "\\n" + p.nic->pci.address.str();
    if (p.netdev) {
      label += p.netdev->speed_mbps ? fmt::format("\\n{}G", *p.netdev->speed_mbps / 1000)
                                    : std::string("\\nno link");
      label += fmt::format(" MTU {}", p.netdev->mtu);
    }
    if (p.nic->pci.sriov_numvfs > 0) label += fmt::format(" {} VFs", p.nic->pci.sriov_numvfs);
    const auto v = worstFor(report, {p.label, p.rdma ? p.rdma->name : ""});
    g.numa_nodes[p.nic->placement.numa_node].push_back(
        fmt::format("\"{}\" [label=\"{}\", shape=box, style=\"rounded,filled\", fillcolor=\"{}\"];",
                    id, label, fill(v)));
    addPath(g, p.nic->placement, id, acs_on);
  }
  for (const auto& gpu : gpus) {
    const std::string id = "dev:" + gpu.gpu->pci.address.str();
    const auto v = worstFor(report, {gpu.label});
    g.numa_nodes[gpu.gpu->placement.numa_node].push_back(fmt::format(
        "\"{}\" [label=\"{}\\n{}\\n{}:{}\", shape=box3d, style=filled, fillcolor=\"{}\"];", id,
        gpu.label, gpu.gpu->pci.address.str(), gpu.gpu->pci.vendor, gpu.gpu->pci.device, fill(v)));
    addPath(g, gpu.gpu->placement, id, acs_on);
  }

  std::string out =
      "digraph rdmanet_node {\n"
      "  rankdir=TB;\n"
      "  compound=true;\n"
      "  node [fontname=\"Helvetica\", fontsize=11];\n"
      "  edge [arrowhead=none];\n";
  std::set<int> numas;
  for (const auto& [n, _] : g.numa_nodes) numas.insert(n);
  for (const auto& [n, _] : g.switches) numas.insert(n);
  for (int n : numas) {
    out += fmt::format("  subgraph cluster_numa{} {{\n",
                       n < 0 ? std::string("_unknown") : std::to_string(n));
    out += fmt::format("    label=\"{}\";\n    style=rounded;\n    color=\"#7a8aa6\";\n",
                       n < 0 ? std::string("NUMA node unknown") : fmt::format("NUMA node {}", n));
    for (const auto& s : g.numa_nodes[n]) out += "    " + s + "\n";
    for (const auto& [up, stmts] : g.switches[n]) {
      std::string cid = up;
      for (char& c : cid) c = (c == ':' || c == '.') ? '_' : c;
      out += fmt::format("    subgraph cluster_switch_{} {{\n", cid);
      out += fmt::format(
          "      label=\"PCIe switch\";\n      style=\"dashed,rounded\";\n      "
          "color=\"#999999\";\n");
      for (const auto& s : stmts) out += "      " + s + "\n";
      out += "    }\n";
    }
    out += "  }\n";
  }
  if (report) {
    // Colour key: one HTML-table node, so it stays a single row apart from the PCIe tree.
    std::string cells;
    for (Verdict v : {Verdict::kPass, Verdict::kWarn, Verdict::kFail, Verdict::kUnknown}) {
      cells += fmt::format("<td bgcolor=\"{}\">{}</td>", fill(v), verdictName(v));
    }
    out += fmt::format(
        "  \"legend\" [shape=plaintext, fontsize=9, label=<<table border=\"0\" "
        "cellborder=\"1\" cellspacing=\"3\"><tr><td border=\"0\">doctor verdict</td>{}</tr>"
        "</table>>];\n",
        cells);
  }
  for (const auto& [a, b] : g.edges) out += fmt::format("  \"{}\" -> \"{}\";\n", a, b);
  out += "}\n";
  return out;
}

}  // namespace rdmanet::doctor
