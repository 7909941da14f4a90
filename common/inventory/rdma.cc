#include "common/inventory/rdma.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>
#include <system_error>

#include "common/inventory/netdev.h"

namespace rdmanet {
namespace {

constexpr std::string_view kClassIb = "/sys/class/infiniband";
constexpr std::string_view kZeroGid = "0000:0000:0000:0000:0000:0000:0000:0000";

// IB_DEVICE_NAME_MAX is 64; names end up in paths, so no '/' and no dot names.
bool isValidRdmaName(std::string_view name) {
  return !name.empty() && name.size() < 64 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos;
}

std::optional<int> parseInt(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return v;
}

// "4: ACTIVE" -> (4, "ACTIVE"); a bare word gives (0, word).
std::pair<int, std::string> parseState(const std::optional<std::string>& raw) {
  if (!raw) return {0, ""};
  const auto colon = raw->find(':');
  if (colon == std::string::npos) return {0, *raw};
  std::string word = raw->substr(colon + 1);
  word.erase(0, word.find_first_not_of(' '));
  return {parseInt(std::string_view(*raw).substr(0, colon)).value_or(0), word};
}

RdmaPort readPort(const Sysfs& sysfs, const std::string& dir, int num, bool gids) {
  RdmaPort port;
  port.num = num;
  std::tie(port.state_num, port.state) = parseState(sysfs.readOpt(dir + "/state"));
  std::tie(port.phys_state_num, port.phys_state) = parseState(sysfs.readOpt(dir + "/phys_state"));
  port.link_layer = sysfs.readOpt(dir + "/link_layer").value_or("");
  if (!gids) return port;
  for (const auto& entry : sysfs.list(dir + "/gids")) {
    auto idx = parseInt(entry);
    if (!idx) continue;
    auto gid = sysfs.readOpt(fmt::format("{}/gids/{}", dir, entry));
    if (!gid || gid->empty() || *gid == kZeroGid) continue;
    port.gids.push_back(RdmaGid{
        .index = *idx,
        .gid = *gid,
        // The kernel answers EINVAL for attributes of unused entries; absent stays empty.
        .type = sysfs.readOpt(fmt::format("{}/gid_attrs/types/{}", dir, entry)).value_or(""),
        .ndev = sysfs.readOpt(fmt::format("{}/gid_attrs/ndevs/{}", dir, entry)).value_or(""),
    });
  }
  std::sort(port.gids.begin(), port.gids.end(),
            [](const RdmaGid& a, const RdmaGid& b) { return a.index < b.index; });
  return port;
}

RdmaCharDevice charDevice(const Sysfs& sysfs, const std::string& dir, const std::string& name) {
  RdmaCharDevice c;
  c.name = name;
  c.dev_path = "/dev/infiniband/" + name;
  if (auto dev = sysfs.readOpt(dir + "/dev")) {
    const auto colon = dev->find(':');
    if (colon != std::string::npos) {
      c.major = parseInt(std::string_view(*dev).substr(0, colon)).value_or(0);
      c.minor = parseInt(std::string_view(*dev).substr(colon + 1)).value_or(0);
    }
  }
  return c;
}

// Char devices of `ibdev` among the entries of `dirs` (class dirs and the device's own dirs),
// each matched by its `ibdev` attribute, deduplicated by name.
void collectCharDevices(const Sysfs& sysfs, const std::vector<std::string>& dirs,
                        const std::string& ibdev, std::vector<RdmaCharDevice>& out) {
  std::set<std::string> seen;
  for (const auto& c : out) seen.insert(c.name);
  std::vector<RdmaCharDevice> found;
  for (const auto& dir : dirs) {
    for (const auto& entry : sysfs.list(dir)) {
      if (seen.contains(entry)) continue;
      const std::string sub = fmt::format("{}/{}", dir, entry);
      if (sysfs.readOpt(sub + "/ibdev") != ibdev) continue;  // also skips abi_version
      seen.insert(entry);
      found.push_back(charDevice(sysfs, sub, entry));
    }
  }
  std::sort(found.begin(), found.end(),
            [](const RdmaCharDevice& a, const RdmaCharDevice& b) { return a.name < b.name; });
  out.insert(out.end(), found.begin(), found.end());
}

// The canonical in-tree path of `abs`, following every link on the way (Sysfs::resolveLink is
// lexical, which goes wrong for a link inside a directory reached through another link).
std::optional<std::string> canonicalInTree(const Sysfs& sysfs, std::string_view abs) {
  // The usual case costs one readlink: a class link (/sys/class/infiniband/mlx5_0) whose target
  // is a real directory under /sys/devices, which holds no further links on the way.
  if (auto target = sysfs.resolveLink(abs); target && target->starts_with("/sys/devices/")) {
    return target;
  }
  std::error_code ec;
  const auto host = std::filesystem::canonical(sysfs.path(abs), ec);
  if (ec) return std::nullopt;
  const auto root = std::filesystem::canonical(sysfs.root(), ec);
  if (ec) return std::nullopt;
  return Sysfs(root).inTree(host);
}

// Reads a device from its directory (class link or the directory under its PCI function).
RdmaDevice readRdmaDeviceAt(const Sysfs& sysfs, const std::string& dir, const std::string& name,
                            const RdmaReadOptions& opts) {
  RdmaDevice d;
  d.name = name;
  const std::string real = canonicalInTree(sysfs, dir).value_or(dir);
  d.is_software = real.starts_with("/sys/devices/virtual/");
  d.node_guid = sysfs.readOpt(dir + "/node_guid").value_or("");

  std::string parent_dir;  // the PCI function's directory, for its char-device subdirectories
  if (sysfs.exists(dir + "/device")) {
    if (auto fn = sysfs.linkName(dir + "/device")) {
      if (auto a = PciAddress::parse(*fn); a.ok()) d.pci = *a;
    }
    // `device` is relative to the device's real directory, which `real` is.
    parent_dir = sysfs.resolveLink(real + "/device").value_or("");
  } else if (!d.is_software) {
    // No device link but under a function: ".../0000:81:00.0/infiniband/mlx5_0".
    std::filesystem::path p(real);
    if (auto a = PciAddress::parse(p.parent_path().parent_path().filename().string()); a.ok()) {
      d.pci = *a;
      parent_dir = p.parent_path().parent_path().generic_string();
    }
  }
  if (auto parent = sysfs.readOpt(dir + "/parent"); parent && isValidIfName(*parent)) {
    d.parent_netdev = *parent;
    // Software RDMA rides on a netdev: it belongs to that netdev's PCI function, if any.
    if (!d.pci) {
      if (auto nd = readNetdev(sysfs, *parent); nd.ok()) d.pci = nd->pci;
    }
  }

  std::vector<std::pair<int, std::string>> ports;
  for (const auto& entry : sysfs.list(dir + "/ports")) {
    if (auto n = parseInt(entry)) ports.emplace_back(*n, entry);
  }
  std::sort(ports.begin(), ports.end());
  for (const auto& [n, entry] : ports)
    d.ports.push_back(readPort(sysfs, fmt::format("{}/ports/{}", dir, entry), n, opts.gids));

  // A PCI function's own infiniband_verbs/ and infiniband_mad/ hold just its char devices. The
  // class directories hold every device's, and matching them costs one `ibdev` read per entry
  // per device (quadratic on a node with many VFs), so they are scanned only when the function's
  // directories give no uverbs node: software devices (their nodes live under
  // /sys/devices/virtual) and trees without the per-function directories.
  if (!parent_dir.empty()) {
    collectCharDevices(sysfs, {parent_dir + "/infiniband_verbs"}, name, d.char_devices);
    collectCharDevices(sysfs, {parent_dir + "/infiniband_mad"}, name, d.char_devices);
  }
  const bool has_uverbs =
      std::any_of(d.char_devices.begin(), d.char_devices.end(),
                  [](const RdmaCharDevice& c) { return c.name.starts_with("uverbs"); });
  if (!has_uverbs) {
    collectCharDevices(sysfs, {"/sys/class/infiniband_verbs"}, name, d.char_devices);
    collectCharDevices(sysfs, {"/sys/class/infiniband_mad"}, name, d.char_devices);
  }
  // rdma_cm is one node shared by every device (the connection manager multiplexes them), so
  // every device lists it; /sys/class/misc/rdma_cm/dev gives its numbers when rdma_ucm is loaded.
  d.char_devices.push_back(charDevice(sysfs, "/sys/class/misc/rdma_cm", "rdma_cm"));
  return d;
}

}  // namespace

std::vector<std::string> listRdmaDevices(const Sysfs& sysfs) {
  std::vector<std::string> names;
  for (auto& n : sysfs.list(kClassIb)) {
    if (isValidRdmaName(n)) names.push_back(std::move(n));
  }
  return names;
}

Result<RdmaDevice> readRdmaDevice(const Sysfs& sysfs, const std::string& name,
                                  const RdmaReadOptions& opts) {
  if (!isValidRdmaName(name)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("invalid RDMA device name \"{}\"", name));
  }
  const std::string dir = fmt::format("{}/{}", kClassIb, name);
  if (!sysfs.exists(dir)) {
    return makeError(ErrorCode::kDeviceNotFound, fmt::format("RDMA device {} not found", name));
  }
  return readRdmaDeviceAt(sysfs, dir, name, opts);
}

std::vector<RdmaDevice> rdmaDevicesUnder(const Sysfs& sysfs, const PciAddress& addr,
                                         const RdmaReadOptions& opts) {
  std::vector<RdmaDevice> out;
  // Hardware devices sit under the function, even if their class link is missing.
  const std::string under = fmt::format("/sys/bus/pci/devices/{}/infiniband", addr.str());
  for (const auto& name : sysfs.list(under)) {  // sorted
    if (!isValidRdmaName(name)) continue;
    const std::string cls = fmt::format("{}/{}", kClassIb, name);
    RdmaDevice d = readRdmaDeviceAt(
        sysfs, sysfs.exists(cls) ? cls : fmt::format("{}/{}", under, name), name, opts);
    d.pci = addr;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<RdmaDevice> rdmaDevicesOf(const Sysfs& sysfs, const PciAddress& addr) {
  std::vector<RdmaDevice> out = rdmaDevicesUnder(sysfs, addr);
  std::set<std::string> seen;
  for (const RdmaDevice& d : out) seen.insert(d.name);
  // Software devices: any class entry whose parent netdev belongs to this function. Checking
  // `parent` first keeps this cheap on a node with many hardware devices.
  const auto netdevs = netdevNamesOf(sysfs, addr);
  for (const auto& name : listRdmaDevices(sysfs)) {
    if (seen.contains(name)) continue;
    auto parent = sysfs.readOpt(fmt::format("{}/{}/parent", kClassIb, name));
    if (!parent || std::find(netdevs.begin(), netdevs.end(), *parent) == netdevs.end()) continue;
    auto d = readRdmaDevice(sysfs, name);
    if (d.ok() && d->pci == addr) out.push_back(std::move(d).value());
  }
  std::sort(out.begin(), out.end(),
            [](const RdmaDevice& a, const RdmaDevice& b) { return a.name < b.name; });
  return out;
}

std::map<PciAddress, std::vector<RdmaDevice>> softwareRdmaDevicesByFunction(
    const Sysfs& sysfs, const RdmaReadOptions& opts) {
  std::map<PciAddress, std::vector<RdmaDevice>> out;
  for (const auto& name : listRdmaDevices(sysfs)) {
    const auto real = sysfs.resolveLink(fmt::format("{}/{}", kClassIb, name));
    if (!real || !real->starts_with("/sys/devices/virtual/")) continue;
    auto d = readRdmaDevice(sysfs, name, opts);
    if (!d.ok() || !d->pci) continue;
    const PciAddress fn = *d->pci;
    out[fn].push_back(std::move(d).value());
  }
  return out;
}

std::map<PciAddress, std::vector<RdmaDevice>> rdmaDevicesByFunction(const Sysfs& sysfs,
                                                                    const RdmaReadOptions& opts) {
  std::map<PciAddress, std::vector<RdmaDevice>> out;
  for (const auto& name : listRdmaDevices(sysfs)) {
    auto d = readRdmaDevice(sysfs, name, opts);
    if (!d.ok() || !d->pci) continue;
    const PciAddress fn = *d->pci;
    out[fn].push_back(std::move(d).value());  // names arrive sorted, so each list is too
  }
  return out;
}

}  // namespace rdmanet
