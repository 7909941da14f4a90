#include "common/inventory/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "common/base/enum_names.h"

namespace rdmanet {

namespace {

constexpr EnumName<Distance> kDistances[] = {{"PIX", Distance::kPix},
                                             {"PXB", Distance::kPxb},
                                             {"PHB", Distance::kPhb},
                                             {"NODE", Distance::kNode},
                                             {"SYS", Distance::kSys}};

}  // namespace

std::string_view distanceName(Distance d) { return nameOf<Distance>(kDistances, d, "SYS"); }

namespace {

// The canonical path spells the hierarchy: /sys/devices/pci0000:80/<root port>/<switch
// upstream>/<switch downstream>/<device>. Every component between the host bridge and the
// device itself is a PCI bridge. Anything else (a hand-made tree without links) leaves the
// placement unknown: SYS from everything.
PciePlacement placementFromPath(const PciAddress& addr, int numa_node, const std::string& real) {
  PciePlacement p;
  p.address = addr;
  p.numa_node = numa_node;
  const std::filesystem::path path(real);
  std::vector<std::string> parts;
  for (const auto& c : path) parts.push_back(c.string());
  // parts: "/", "sys", "devices", "pci0000:80", ...
  if (parts.size() < 5 || parts[1] != "sys" || parts[2] != "devices" ||
      !parts[3].starts_with("pci")) {
    return p;
  }
  p.root_complex = parts[3];
  for (size_t i = 4; i + 1 < parts.size(); ++i) {
    if (auto a = PciAddress::parse(parts[i]); a.ok()) p.bridges.push_back(*a);
  }
  return p;
}

}  // namespace

Result<PciePlacement> readPlacement(const Sysfs& sysfs, const PciAddress& addr) {
  const std::string link = fmt::format("/sys/bus/pci/devices/{}", addr.str());
  if (!sysfs.exists(link)) {
    return makeError(ErrorCode::kDeviceNotFound,
                     fmt::format("PCI function {} not found", addr.str()));
  }
  const int numa = static_cast<int>(sysfs.readInt(link + "/numa_node").value_or(-1));
  return placementFromPath(addr, numa, sysfs.resolveLink(link).value_or(""));
}

PciePlacement placementOf(const PciFunction& f) {
  return placementFromPath(f.address, f.numa_node, f.sysfs_dir);
}

Distance classifyDistance(const PciePlacement& a, const PciePlacement& b) {
  if (a.root_complex.empty() || b.root_complex.empty() || a.root_complex != b.root_complex) {
    return (a.numa_node >= 0 && a.numa_node == b.numa_node) ? Distance::kNode : Distance::kSys;
  }
  size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() &&
         a.bridges[common] == b.bridges[common]) {
    ++common;
  }
  if (common == 0) return Distance::kPhb;  // different root ports of one host bridge
  // PIX: at most one more bridge on each side below the lowest shared one. Two sibling bridges
  // below a shared bridge means that bridge is a switch's upstream port and both devices hang
  // off its downstream ports (a root port has one link, so it cannot have bridge siblings).
  if (a.bridges.size() - common <= 1 && b.bridges.size() - common <= 1) return Distance::kPix;
  return Distance::kPxb;
}

}  // namespace rdmanet
