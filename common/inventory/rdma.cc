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

// IB_DEVICE_NAME_MAX is 64; names end up in paths, so no '/' and no dot names; and printable
// ASCII (netdev.h, isPrintableAsciiName), as `rdma dev set NAME name NEW` takes any other byte.
bool isValidRdmaName(std::string_view name) {
  return !name.empty() && name.size() < 64 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && isPrintableAsciiName(name);
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

// Char devices of `ibdev` in one of its function's char-device directories (infiniband_verbs,
// infiniband_mad), each matched by its `ibdev` attribute (which also skips abi_version), sorted.
void collectCharDevices(const Sysfs& sysfs, const std::string& dir, const std::string& ibdev,
                        std::vector<RdmaCharDevice>& out) {
  std::vector<RdmaCharDevice> found;
  for (const auto& entry : sysfs.list(dir)) {  // sorted
    const std::string sub = fmt::format("{}/{}", dir, entry);
    if (sysfs.readOpt(sub + "/ibdev") != ibdev) continue;
    found.push_back(charDevice(sysfs, sub, entry));
  }
  out.insert(out.end(), found.begin(), found.end());
}

bool hasUverbs(const std::vector<RdmaCharDevice>& devs) {
  return std::any_of(devs.begin(), devs.end(),
                     [](const RdmaCharDevice& c) { return c.name.starts_with("uverbs"); });
}

// The canonical in-tree path of `abs`, following every link on the way (Sysfs::resolveLink is
// lexical, which goes wrong for a link inside a directory reached through another link).
std::optional<std::string> canonicalInTree(const Sysfs& sysfs, std::string_view abs) {
  // The usual case costs one readlink: a class link (/sys/class/infiniband/mlx5_0) whose target
  // is a real directory under /sys/devices, which holds no further links on the way.
  if (auto target = sysfs.resolveLink(abs); target && target->starts_with("/sys/devices/")) {
    return target;
  }
  return sysfs.canonical(abs);
}

void sortByName(std::vector<RdmaDevice>& devs) {
  std::sort(devs.begin(), devs.end(),
            [](const RdmaDevice& a, const RdmaDevice& b) { return a.name < b.name; });
}

}  // namespace

std::vector<std::string> listRdmaDevices(const Sysfs& sysfs) {
  std::vector<std::string> names;
  for (auto& n : sysfs.list(kClassIb)) {
    if (isValidRdmaName(n)) {
      names.push_back(std::move(n));
    } else {
      sysfs.refused(kClassIb, n);
    }
  }
  return names;
}

RdmaReader::RdmaReader(const Sysfs& sysfs, RdmaReadOptions opts) : sysfs_(sysfs), opts_(opts) {}

const std::vector<RdmaReader::ClassCharDevice>& RdmaReader::classCharDevices() {
  if (class_chars_) return *class_chars_;
  class_chars_.emplace();
  for (const char* dir : {"/sys/class/infiniband_verbs", "/sys/class/infiniband_mad"}) {
    for (const auto& entry : sysfs_.list(dir)) {  // sorted
      const std::string sub = fmt::format("{}/{}", dir, entry);
      auto ibdev = sysfs_.readOpt(sub + "/ibdev");  // absent for abi_version
      if (!ibdev) continue;
      class_chars_->push_back({.ibdev = std::move(*ibdev), .dev = charDevice(sysfs_, sub, entry)});
    }
  }
  return *class_chars_;
}

const RdmaCharDevice& RdmaReader::rdmaCm() {
  // One node shared by every device (the connection manager multiplexes them);
  // /sys/class/misc/rdma_cm/dev gives its numbers when rdma_ucm is loaded.
  if (!rdma_cm_) rdma_cm_ = charDevice(sysfs_, "/sys/class/misc/rdma_cm", "rdma_cm");
  return *rdma_cm_;
}

RdmaDevice RdmaReader::readAt(const std::string& dir, const std::string& name) {
  RdmaDevice d;
  d.name = name;
  const std::string real = canonicalInTree(sysfs_, dir).value_or(dir);
  d.is_software = real.starts_with("/sys/devices/virtual/");
  d.node_guid = sysfs_.readOpt(dir + "/node_guid").value_or("");

  std::string parent_dir;  // the PCI function's directory, for its char-device subdirectories
  if (sysfs_.exists(dir + "/device")) {
    if (auto fn = sysfs_.linkName(dir + "/device")) {
      if (auto a = PciAddress::parse(*fn); a.ok()) d.pci = *a;
    }
    // `device` is relative to the device's real directory, which `real` is.
    parent_dir = sysfs_.resolveLink(real + "/device").value_or("");
  } else if (!d.is_software) {
    // No device link but under a function: ".../0000:81:00.0/infiniband/mlx5_0".
    std::filesystem::path p(real);
    if (auto a = PciAddress::parse(p.parent_path().parent_path().filename().string()); a.ok()) {
      d.pci = *a;
      parent_dir = p.parent_path().parent_path().generic_string();
    }
  }
  // Only software devices (rxe, siw) have `parent`: reading it on a hardware device would be a
  // failed open per device.
  if (d.is_software || !d.pci) {
    if (auto parent = sysfs_.readOpt(dir + "/parent"); parent && isValidIfName(*parent)) {
      d.parent_netdev = *parent;
      // Software RDMA rides on a netdev: it belongs to that netdev's PCI function, if any.
      if (!d.pci) {
        if (auto nd = readNetdev(sysfs_, *parent); nd.ok()) d.pci = nd->pci;
      }
    }
  }

  std::vector<std::pair<int, std::string>> ports;
  for (const auto& entry : sysfs_.list(dir + "/ports")) {
    if (auto n = parseInt(entry)) ports.emplace_back(*n, entry);
  }
  std::sort(ports.begin(), ports.end());
  for (const auto& [n, entry] : ports) {
    d.ports.push_back(readPort(sysfs_, fmt::format("{}/ports/{}", dir, entry), n, opts_.gids));
  }

  // A PCI function's own infiniband_verbs/ and infiniband_mad/ hold just its char devices. The
  // class directories hold every device's: they are read once per reader, and only when the
  // function's directories give no uverbs node (software devices, whose nodes live under
  // /sys/devices/virtual, and trees without the per-function directories).
  if (!parent_dir.empty()) {
    collectCharDevices(sysfs_, parent_dir + "/infiniband_verbs", name, d.char_devices);
    collectCharDevices(sysfs_, parent_dir + "/infiniband_mad", name, d.char_devices);
  }
  if (!hasUverbs(d.char_devices)) {
    std::set<std::string> seen;
    for (const auto& c : d.char_devices) seen.insert(c.name);
    for (const ClassCharDevice& c : classCharDevices()) {
      if (c.ibdev == name && seen.insert(c.dev.name).second) d.char_devices.push_back(c.dev);
    }
  }
  d.char_devices.push_back(rdmaCm());
  return d;
}

Result<RdmaDevice> RdmaReader::read(const std::string& name) {
  if (!isValidRdmaName(name)) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("invalid RDMA device name \"{}\"", name));
  }
  const std::string dir = fmt::format("{}/{}", kClassIb, name);
  if (!sysfs_.exists(dir)) {
    return makeError(ErrorCode::kDeviceNotFound, fmt::format("RDMA device {} not found", name));
  }
  return readAt(dir, name);
}

std::vector<RdmaDevice> RdmaReader::under(const PciAddress& fn) {
  std::vector<RdmaDevice> out;
  // Hardware devices sit under the function, even if their class link is missing.
  const std::string under = fmt::format("/sys/bus/pci/devices/{}/infiniband", fn.str());
  for (const auto& name : sysfs_.list(under)) {  // sorted
    if (!isValidRdmaName(name)) {
      sysfs_.refused(under, name);
      continue;
    }
    const std::string cls = fmt::format("{}/{}", kClassIb, name);
    RdmaDevice d = readAt(sysfs_.exists(cls) ? cls : fmt::format("{}/{}", under, name), name);
    d.pci = fn;
    out.push_back(std::move(d));
  }
  return out;
}

std::map<PciAddress, std::vector<RdmaDevice>> RdmaReader::byFunction() {
  std::map<PciAddress, std::vector<RdmaDevice>> out;
  for (const auto& name : listRdmaDevices(sysfs_)) {
    RdmaDevice d = readAt(fmt::format("{}/{}", kClassIb, name), name);
    if (!d.pci) continue;
    const PciAddress fn = *d.pci;
    out[fn].push_back(std::move(d));  // names arrive sorted, so each list is too
  }
  return out;
}

std::map<PciAddress, std::vector<RdmaDevice>> RdmaReader::softwareByFunction(
    const std::function<bool(const PciAddress&)>& want) {
  std::map<PciAddress, std::vector<RdmaDevice>> out;
  for (const auto& name : listRdmaDevices(sysfs_)) {
    const std::string dir = fmt::format("{}/{}", kClassIb, name);
    const auto real = sysfs_.resolveLink(dir);
    if (!real || !real->starts_with("/sys/devices/virtual/")) continue;
    if (want) {
      auto parent = sysfs_.readOpt(dir + "/parent");
      if (!parent || !isValidIfName(*parent)) continue;
      auto nd = readNetdev(sysfs_, *parent);
      if (!nd.ok() || !nd->pci || !want(*nd->pci)) continue;
    }
    RdmaDevice d = readAt(dir, name);
    if (!d.pci) continue;
    const PciAddress fn = *d.pci;
    out[fn].push_back(std::move(d));
  }
  return out;
}

Result<RdmaDevice> readRdmaDevice(const Sysfs& sysfs, const std::string& name,
                                  const RdmaReadOptions& opts) {
  return RdmaReader(sysfs, opts).read(name);
}

std::vector<RdmaDevice> rdmaDevicesUnder(const Sysfs& sysfs, const PciAddress& addr,
                                         const RdmaReadOptions& opts) {
  return RdmaReader(sysfs, opts).under(addr);
}

std::map<PciAddress, std::vector<RdmaDevice>> rdmaDevicesByFunction(const Sysfs& sysfs,
                                                                    const RdmaReadOptions& opts) {
  return RdmaReader(sysfs, opts).byFunction();
}

std::map<PciAddress, std::vector<RdmaDevice>> softwareRdmaDevicesByFunction(
    const Sysfs& sysfs, const RdmaReadOptions& opts) {
  return RdmaReader(sysfs, opts).softwareByFunction();
}

std::vector<RdmaDevice> rdmaDevicesOf(const Sysfs& sysfs, const PciAddress& addr) {
  RdmaReader reader(sysfs);
  std::vector<RdmaDevice> out = reader.under(addr);
  std::set<std::string> seen;
  for (const RdmaDevice& d : out) seen.insert(d.name);
  // Software devices: a class entry under /sys/devices/virtual whose parent netdev belongs to
  // this function. The readlink skips hardware devices, which have no `parent`.
  const auto netdevs = netdevNamesOf(sysfs, addr);
  for (const auto& name : listRdmaDevices(sysfs)) {
    if (seen.contains(name)) continue;
    const std::string dir = fmt::format("{}/{}", kClassIb, name);
    const auto real = sysfs.resolveLink(dir);
    if (!real || !real->starts_with("/sys/devices/virtual/")) continue;
    auto parent = sysfs.readOpt(dir + "/parent");
    if (!parent || std::find(netdevs.begin(), netdevs.end(), *parent) == netdevs.end()) continue;
    auto d = reader.read(name);
    if (d.ok() && d->pci == addr) out.push_back(std::move(d).value());
  }
  sortByName(out);
  return out;
}

}  // namespace rdmanet
