#include "tests/simnode/topology_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rdmanet::sim {
namespace {

using nlohmann::json;

// Thrown inside the parser and turned into error 7 at the top; carries the key path.
struct BadField {
  std::string msg;
};

unsigned long hexOrNumber(const json& j, const std::string& where) {
  if (j.is_number_unsigned()) return j.get<unsigned long>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    size_t pos = 0;
    try {
      const unsigned long v = std::stoul(s, &pos, 16);
      if (pos == s.size()) return v;
    } catch (const std::exception&) {
    }
  }
  throw BadField{fmt::format("{}: want a number or a hex string, got {}", where, j.dump())};
}

template <typename T>
void opt(const json& obj, const char* key, T& out, const std::string& where) {
  if (!obj.contains(key)) return;
  try {
    out = obj.at(key).get<T>();
  } catch (const json::exception&) {
    throw BadField{fmt::format("{}.{}: wrong type ({})", where, key, obj.at(key).dump())};
  }
}

void optHex(const json& obj, const char* key, uint32_t& out, const std::string& where) {
  if (obj.contains(key)) out = static_cast<uint32_t>(hexOrNumber(obj.at(key), where + "." + key));
}

void checkKeys(const json& obj, std::initializer_list<const char*> known,
               const std::string& where) {
  if (!obj.is_object()) throw BadField{where + ": want an object"};
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) throw BadField{fmt::format("{}: unknown key \"{}\"", where, it.key())};
  }
}

NicModel parseNic(const json& j, const std::string& where) {
  checkKeys(j,
            {"name", "vendor", "pf_device", "vf_device", "class", "driver", "vf_driver", "ports",
             "vfs_per_port", "total_vfs", "rdma", "vf_rdma", "rdma_kind", "vf_rdma_at",
             "link_layer", "speed", "mtu"},
            where);
  NicModel n;
  opt(j, "name", n.name, where);
  opt(j, "vendor", n.vendor, where);
  opt(j, "pf_device", n.pf_device, where);
  opt(j, "vf_device", n.vf_device, where);
  optHex(j, "class", n.class_code, where);
  opt(j, "driver", n.driver, where);
  opt(j, "vf_driver", n.vf_driver, where);
  opt(j, "ports", n.ports, where);
  opt(j, "vfs_per_port", n.vfs_per_port, where);
  n.total_vfs = std::max(n.total_vfs, n.vfs_per_port);
  opt(j, "total_vfs", n.total_vfs, where);
  opt(j, "rdma", n.rdma, where);
  opt(j, "vf_rdma", n.vf_rdma, where);
  opt(j, "rdma_kind", n.rdma_kind, where);
  opt(j, "vf_rdma_at", n.vf_rdma_at, where);
  if (n.rdma_kind != "mlx5" && n.rdma_kind != "rxe") {
    throw BadField{where + ".rdma_kind: want \"mlx5\" or \"rxe\""};
  }
  if (n.vf_rdma_at != "class" && n.vf_rdma_at != "no-class" && n.vf_rdma_at != "other-netns") {
    throw BadField{where + ".vf_rdma_at: want \"class\", \"no-class\" or \"other-netns\""};
  }
  opt(j, "link_layer", n.link_layer, where);
  opt(j, "speed", n.speed_mbps, where);
  opt(j, "mtu", n.mtu, where);
  if (n.ports < 1 || n.ports > 8) throw BadField{where + ".ports: want 1..8"};
  if (n.vfs_per_port < 0 || n.vfs_per_port > n.total_vfs) {
    throw BadField{where + ".vfs_per_port: want 0..total_vfs"};
  }
  if (n.ports * (1 + n.vfs_per_port) > 256) throw BadField{where + ": more than 256 functions"};
  return n;
}

GpuModel parseGpu(const json& j, const std::string& where) {
  checkKeys(j, {"vendor", "device", "class", "driver"}, where);
  GpuModel g;
  opt(j, "vendor", g.vendor, where);
  opt(j, "device", g.device, where);
  optHex(j, "class", g.class_code, where);
  opt(j, "driver", g.driver, where);
  return g;
}

SlotModel parseSlot(const json& j, const std::string& where) {
  checkKeys(j, {"acs_redirect", "switch", "nic", "gpu"}, where);
  SlotModel s;
  opt(j, "acs_redirect", s.acs_redirect, where);
  const int kinds = j.contains("switch") + j.contains("nic") + j.contains("gpu");
  if (kinds > 1) throw BadField{where + ": want at most one of switch, nic, gpu"};
  if (j.contains("nic")) {
    s.kind = SlotModel::Kind::kNic;
    s.nic = parseNic(j.at("nic"), where + ".nic");
  } else if (j.contains("gpu")) {
    s.kind = SlotModel::Kind::kGpu;
    s.gpu = parseGpu(j.at("gpu"), where + ".gpu");
  } else if (j.contains("switch")) {
    const json& sw = j.at("switch");
    const std::string w = where + ".switch";
    checkKeys(sw, {"acs_redirect", "downstream"}, w);
    s.kind = SlotModel::Kind::kSwitch;
    opt(sw, "acs_redirect", s.switch_acs_redirect, w);
    if (sw.contains("downstream")) {
      const json& ds = sw.at("downstream");
      if (!ds.is_array() || ds.size() > 32)
        throw BadField{w + ".downstream: want an array (<= 32)"};
      for (size_t i = 0; i < ds.size(); ++i) {
        s.downstream.push_back(parseSlot(ds[i], fmt::format("{}.downstream[{}]", w, i)));
      }
    }
  }
  return s;
}

Topology parseTop(const json& j) {
  checkKeys(j, {"name", "ifprefix", "host_bridges", "comment"}, "topology");
  Topology t;
  opt(j, "name", t.name, "topology");
  opt(j, "ifprefix", t.ifprefix, "topology");
  if (!j.contains("host_bridges") || !j.at("host_bridges").is_array()) {
    throw BadField{"topology.host_bridges: want an array"};
  }
  const json& hbs = j.at("host_bridges");
  for (size_t i = 0; i < hbs.size(); ++i) {
    const std::string w = fmt::format("host_bridges[{}]", i);
    checkKeys(hbs[i], {"domain", "bus", "numa_node", "root_ports"}, w);
    HostBridgeModel hb;
    if (hbs[i].contains("domain")) {
      hb.domain = static_cast<uint16_t>(hexOrNumber(hbs[i].at("domain"), w + ".domain"));
    }
    if (hbs[i].contains("bus")) {
      const auto bus = hexOrNumber(hbs[i].at("bus"), w + ".bus");
      if (bus > 0xff) throw BadField{w + ".bus: want 0..0xff"};
      hb.bus = static_cast<uint8_t>(bus);
    }
    opt(hbs[i], "numa_node", hb.numa_node, w);
    if (hbs[i].contains("root_ports")) {
      const json& rps = hbs[i].at("root_ports");
      if (!rps.is_array() || rps.size() > 31) throw BadField{w + ".root_ports: want an array"};
      for (size_t k = 0; k < rps.size(); ++k) {
        hb.root_ports.push_back(parseSlot(rps[k], fmt::format("{}.root_ports[{}]", w, k)));
      }
    }
    t.host_bridges.push_back(std::move(hb));
  }
  return t;
}

}  // namespace

Result<Topology> parseTopology(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return makeError(ErrorCode::kDecodeFailure, fmt::format("topology: {}", e.what()));
  }
  try {
    return parseTop(j);
  } catch (const BadField& b) {
    return makeError(ErrorCode::kInvalidConfig, b.msg);
  }
}

Result<Topology> loadTopology(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return makeError(ErrorCode::kIoFailure, "cannot read topology " + file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return parseTopology(ss.str());
}

}  // namespace rdmanet::sim
