#include "common/inventory/netdev.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/base/enum_names.h"

namespace rdmanet {

namespace {

constexpr EnumName<LinkType> kLinkTypes[] = {{"ether", LinkType::kEther},
                                             {"infiniband", LinkType::kInfiniband}};

}  // namespace

std::string_view linkTypeName(LinkType t) { return nameOf<LinkType>(kLinkTypes, t, "other"); }

namespace {

// Reads a netdev's attributes from its directory (class/net/<if> or <pci dir>/net/<if>).
Netdev readNetdevAt(const Sysfs& sysfs, const std::string& dir, const std::string& name) {
  Netdev n;
  n.name = name;
  n.ifindex = static_cast<int>(sysfs.readInt(dir + "/ifindex").value_or(0));
  n.mac = sysfs.readOpt(dir + "/address").value_or("");
  n.mtu = static_cast<int>(sysfs.readInt(dir + "/mtu").value_or(0));
  n.operstate = sysfs.readOpt(dir + "/operstate").value_or("unknown");
  // Reading `speed` fails with EINVAL on a down link and some drivers print -1 or 0: absent.
  if (auto speed = sysfs.readInt(dir + "/speed"); speed && *speed > 0) {
    n.speed_mbps = static_cast<int>(*speed);
  }
  switch (sysfs.readInt(dir + "/type").value_or(-1)) {
    case 1:  // ARPHRD_ETHER
      n.link_type = LinkType::kEther;
      break;
    case 32:  // ARPHRD_INFINIBAND
      n.link_type = LinkType::kInfiniband;
      break;
    default:
      n.link_type = LinkType::kOther;
  }
  return n;
}

// The PCI function a class/net entry belongs to: its `device` link, or failing that the
// directory that holds its net/ directory (".../0000:81:00.0/net/ens1f0").
std::optional<PciAddress> owningFunction(const Sysfs& sysfs, const std::string& dir) {
  if (sysfs.exists(dir + "/device")) {
    if (auto name = sysfs.linkName(dir + "/device")) {
      if (auto a = PciAddress::parse(*name); a.ok()) return *a;
    }
  }
  auto resolved = sysfs.resolveLink(dir);
  if (!resolved) return std::nullopt;
  std::filesystem::path p(*resolved);
  if (p.parent_path().filename() != "net") return std::nullopt;
  if (auto a = PciAddress::parse(p.parent_path().parent_path().filename().string()); a.ok()) {
    return *a;
  }
  return std::nullopt;  // a virtual device (/sys/devices/virtual/net/...)
}

}  // namespace

bool isPrintableAsciiName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < '\x7f'; });
}

bool isValidIfName(std::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  // Printable ASCII has no whitespace or NUL, the kernel's other refusals.
  return isPrintableAsciiName(name) && name.find_first_of("/:") == std::string_view::npos;
}

std::vector<std::string> netdevNamesOf(const Sysfs& sysfs, const PciAddress& addr) {
  std::vector<std::string> names;
  const std::string dir = fmt::format("/sys/bus/pci/devices/{}/net", addr.str());
  for (auto& n : sysfs.list(dir)) {
    if (isValidIfName(n)) {
      names.push_back(std::move(n));
    } else {
      sysfs.refused(dir, n);
    }
  }
  return names;  // Sysfs::list sorts
}

std::vector<Netdev> netdevsOf(const Sysfs& sysfs, const PciAddress& addr) {
  std::vector<Netdev> out;
  const std::string base = fmt::format("/sys/bus/pci/devices/{}/net", addr.str());
  for (const auto& name : netdevNamesOf(sysfs, addr)) {
    Netdev n = readNetdevAt(sysfs, fmt::format("{}/{}", base, name), name);
    n.pci = addr;
    out.push_back(std::move(n));
  }
  return out;
}

Result<Netdev> readNetdev(const Sysfs& sysfs, const std::string& name) {
  if (!isValidIfName(name)) {
    return makeError(ErrorCode::kInvalidConfig, fmt::format("invalid interface name \"{}\"", name));
  }
  const std::string dir = "/sys/class/net/" + name;
  if (!sysfs.exists(dir)) {
    return makeError(ErrorCode::kDeviceNotFound, fmt::format("netdev {} not found", name));
  }
  Netdev n = readNetdevAt(sysfs, dir, name);
  n.pci = owningFunction(sysfs, dir);
  return n;
}

std::vector<std::string> listNetdevs(const Sysfs& sysfs) {
  std::vector<std::string> names;
  for (auto& n : sysfs.list("/sys/class/net")) {
    if (isValidIfName(n)) {
      names.push_back(std::move(n));
    } else {
      sysfs.refused("/sys/class/net", n);
    }
  }
  return names;
}

}  // namespace rdmanet
