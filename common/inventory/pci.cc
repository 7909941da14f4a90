#include "common/inventory/pci.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <utility>

namespace rdmanet {
namespace {

constexpr std::string_view kPciDevices = "/sys/bus/pci/devices";

// "0x15b3" -> "15b3". sysfs prints lowercase already; normalise anyway for hand-made trees.
std::string hexId(const std::optional<std::string>& raw) {
  if (!raw) return {};
  std::string s = *raw;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.erase(0, 2);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<int> parseIndex(std::string_view digits) {
  int v = 0;
  if (digits.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size() || v < 0) return std::nullopt;
  return v;
}

// The PCI address a link such as physfn or virtfn3 points at, if it resolves.
std::optional<PciAddress> linkedFunction(const Sysfs& sysfs, const std::string& link) {
  if (!sysfs.exists(link)) return std::nullopt;  // dangling: the function is gone
  auto name = sysfs.linkName(link);
  if (!name) return std::nullopt;
  auto addr = PciAddress::parse(*name);
  if (!addr.ok()) return std::nullopt;
  return *addr;
}

// virtfnN links of a PF directory, as (N, address) sorted by N.
std::vector<std::pair<int, PciAddress>> virtfns(const Sysfs& sysfs, const std::string& dir) {
  std::vector<std::pair<int, PciAddress>> out;
  for (const auto& entry : sysfs.list(dir)) {
    if (!entry.starts_with("virtfn")) continue;
    auto idx = parseIndex(std::string_view(entry).substr(6));
    if (!idx) continue;
    if (auto addr = linkedFunction(sysfs, fmt::format("{}/{}", dir, entry)))
      out.emplace_back(*idx, *addr);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<PciAddress> listPciFunctions(const Sysfs& sysfs) {
  std::vector<PciAddress> out;
  for (const auto& name : sysfs.list(kPciDevices)) {
    auto addr = PciAddress::parse(name);
    if (!addr.ok()) continue;
    // exists() follows the link, so a broken entry (device removed mid-scan) is skipped.
    if (!sysfs.exists(fmt::format("{}/{}", kPciDevices, name))) continue;
    out.push_back(*addr);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// A function's attributes and its PF link; vf_index is left to the caller. `virtfns_out`, if
// given, receives the function's own virtfnN links (a PF's VFs by index).
Result<PciFunction> readAttributes(const Sysfs& sysfs, const PciAddress& addr,
                                   std::vector<std::pair<int, PciAddress>>* virtfns_out) {
  const std::string dir = fmt::format("{}/{}", kPciDevices, addr.str());
  if (!sysfs.exists(dir)) {
    return makeError(ErrorCode::kDeviceNotFound,
                     fmt::format("PCI function {} not found", addr.str()));
  }
  PciFunction f;
  f.address = addr;
  f.sysfs_dir = sysfs.resolveLink(dir).value_or(dir);
  f.vendor = hexId(sysfs.readOpt(dir + "/vendor"));
  f.device = hexId(sysfs.readOpt(dir + "/device"));
  f.class_code = static_cast<uint32_t>(sysfs.readInt(dir + "/class").value_or(0)) & 0xffffff;
  if (sysfs.exists(dir + "/driver")) f.driver = sysfs.linkName(dir + "/driver").value_or("");
  f.numa_node = static_cast<int>(sysfs.readInt(dir + "/numa_node").value_or(-1));
  if (auto group = sysfs.linkName(dir + "/iommu_group")) f.iommu_group = parseIndex(*group);

  // Only a function with the SR-IOV capability has sriov_* files and virtfn links: the others
  // (every VF) skip listing their directory.
  const auto totalvfs = sysfs.readInt(dir + "/sriov_totalvfs");
  f.sriov_totalvfs = static_cast<int>(totalvfs.value_or(0));
  if (totalvfs) f.sriov_numvfs = static_cast<int>(sysfs.readInt(dir + "/sriov_numvfs").value_or(0));
  auto links = totalvfs ? virtfns(sysfs, dir) : std::vector<std::pair<int, PciAddress>>{};
  for (auto& [idx, vf] : links) f.vfs.push_back(vf);
  if (virtfns_out) *virtfns_out = std::move(links);

  if (auto pf = linkedFunction(sysfs, dir + "/physfn")) f.pf = *pf;
  return f;
}

int routingId(const PciAddress& a) { return a.bus << 8 | a.device << 3 | a.function; }

// The VF index is not an attribute of the VF: it is the N of the PF's virtfnN link. SR-IOV
// places VF N at the PF's routing ID + offset + N * stride, so one link read confirms the
// likely N; only when that fails (a hand-made tree, an odd layout) are all links read.
std::optional<int> vfIndexOf(const Sysfs& sysfs, const PciAddress& pf, const PciAddress& vf) {
  const std::string pf_dir = fmt::format("{}/{}", kPciDevices, pf.str());
  const auto offset = sysfs.readInt(pf_dir + "/sriov_offset");
  const auto stride = sysfs.readInt(pf_dir + "/sriov_stride");
  if (offset && stride && *stride > 0 && pf.domain == vf.domain) {
    const long long delta = routingId(vf) - routingId(pf) - *offset;
    if (delta >= 0 && delta % *stride == 0) {
      const long long n = delta / *stride;
      if (linkedFunction(sysfs, fmt::format("{}/virtfn{}", pf_dir, n)) == vf) {
        return static_cast<int>(n);
      }
    }
  }
  for (auto& [idx, addr] : virtfns(sysfs, pf_dir)) {
    if (addr == vf) return idx;
  }
  return std::nullopt;
}

}  // namespace

std::optional<PciAddress> functionOfDevpath(std::string_view devpath) {
  std::optional<PciAddress> last;
  while (!devpath.empty()) {
    const size_t slash = devpath.find('/');
    if (auto a = PciAddress::parse(devpath.substr(0, slash)); a.ok()) last = *a;
    if (slash == std::string_view::npos) break;
    devpath.remove_prefix(slash + 1);
  }
  return last;
}

Result<PciFunction> readPciFunction(const Sysfs& sysfs, const PciAddress& addr) {
  RDMANET_ASSIGN_OR_RETURN(PciFunction f, readAttributes(sysfs, addr, nullptr));
  if (f.pf) f.vf_index = vfIndexOf(sysfs, *f.pf, addr);
  return f;
}

std::vector<PciFunction> readPciFunctions(const Sysfs& sysfs, std::vector<PciAddress> addrs) {
  std::sort(addrs.begin(), addrs.end());
  addrs.erase(std::unique(addrs.begin(), addrs.end()), addrs.end());
  std::vector<PciFunction> out;
  // (PF, VF) -> N, from the virtfn links of the PFs read here: each PF's links are read once.
  std::map<std::pair<PciAddress, PciAddress>, int> index_of;
  for (const PciAddress& addr : addrs) {
    std::vector<std::pair<int, PciAddress>> links;
    auto f = readAttributes(sysfs, addr, &links);
    if (!f.ok()) continue;  // vanished between listing and reading
    for (const auto& [idx, vf] : links) index_of.emplace(std::pair{addr, vf}, idx);
    out.push_back(std::move(f).value());
  }
  for (PciFunction& f : out) {
    if (!f.pf) continue;
    if (auto it = index_of.find({*f.pf, f.address}); it != index_of.end()) {
      f.vf_index = it->second;
    } else if (!std::binary_search(addrs.begin(), addrs.end(), *f.pf)) {
      f.vf_index = vfIndexOf(sysfs, *f.pf, f.address);
    }
  }
  return out;  // in address order, as `addrs` now is
}

}  // namespace rdmanet
