#include "common/inventory/pci.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
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
    if (auto addr = linkedFunction(sysfs, dir + "/" + entry)) out.emplace_back(*idx, *addr);
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

Result<PciFunction> readPciFunction(const Sysfs& sysfs, const PciAddress& addr) {
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

  f.sriov_totalvfs = static_cast<int>(sysfs.readInt(dir + "/sriov_totalvfs").value_or(0));
  f.sriov_numvfs = static_cast<int>(sysfs.readInt(dir + "/sriov_numvfs").value_or(0));
  for (auto& [idx, vf] : virtfns(sysfs, dir)) f.vfs.push_back(vf);

  if (auto pf = linkedFunction(sysfs, dir + "/physfn")) {
    f.pf = *pf;
    // The VF index is not an attribute of the VF: it is the N of the PF's virtfnN link.
    for (auto& [idx, vf] : virtfns(sysfs, fmt::format("{}/{}", kPciDevices, pf->str()))) {
      if (vf == addr) f.vf_index = idx;
    }
  }
  return f;
}

}  // namespace rdmanet
