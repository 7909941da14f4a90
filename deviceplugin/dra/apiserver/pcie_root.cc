#include "deviceplugin/dra/apiserver/pcie_root.h"

#include <fmt/format.h>

#include <filesystem>

namespace rdmanet::dra {

Result<std::string> pcieRoot(const Sysfs& sysfs, const PciAddress& addr) {
  // Upstream accepts only lower-case BDFs; PciAddress::str() is that canonical form.
  const std::string bdf = addr.str();
  const std::string link = "/sys/bus/pci/devices/" + bdf;
  const auto target = sysfs.resolveLink(link);
  if (!target) {
    return makeError(ErrorCode::kDeviceNotFound,
                     fmt::format("PCI function {}: {} is not a symlink", bdf, link));
  }
  constexpr std::string_view kDevices = "/sys/devices/";
  if (!target->starts_with("/sys/devices/pci")) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("PCI function {}: {} points to {}, not below /sys/devices/pci",
                                 bdf, link, *target));
  }
  if (std::filesystem::path(*target).filename() != bdf) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("PCI function {}: {} points to {}, which does not end in {}", bdf,
                                 link, *target, bdf));
  }
  const std::string rest = target->substr(kDevices.size());
  return rest.substr(0, rest.find('/'));
}

}  // namespace rdmanet::dra
