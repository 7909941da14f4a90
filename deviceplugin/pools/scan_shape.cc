#include "deviceplugin/pools/scan_shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace rdmanet::dp {

namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::optional<std::string> functionChange(const Sysfs& sysfs, const NicFunction& fn) {
  const std::string dir = "/sys/bus/pci/devices/" + fn.pci.address.str();
  const std::string driver = sysfs.linkName(dir + "/driver").value_or("");
  if (driver != fn.pci.driver) {
    return fmt::format("{}: driver \"{}\" -> \"{}\"", fn.pci.address.str(), fn.pci.driver, driver);
  }
  std::vector<std::string> netdevs;
  netdevs.reserve(fn.netdevs.size());
  for (const Netdev& n : fn.netdevs) netdevs.push_back(n.name);
  if (auto now = sysfs.list(dir + "/net"); now != sorted(std::move(netdevs))) {
    return fmt::format("{}: netdevs now [{}]", fn.pci.address.str(), fmt::join(now, ","));
  }
  // Hardware RDMA devices sit under their function; software ones (rxe, siw) are in the class
  // listing the caller compares.
  std::vector<std::string> rdma;
  for (const RdmaDevice& r : fn.rdma) {
    if (!r.is_software) rdma.push_back(r.name);
  }
  if (auto now = sysfs.list(dir + "/infiniband"); now != sorted(std::move(rdma))) {
    return fmt::format("{}: RDMA devices now [{}]", fn.pci.address.str(), fmt::join(now, ","));
  }
  if (fn.pci.isPf()) {
    const long long vfs = sysfs.readInt(dir + "/sriov_numvfs").value_or(0);  // as scanned
    if (vfs != fn.pci.sriov_numvfs) {
      return fmt::format("{}: sriov_numvfs {} -> {}", fn.pci.address.str(), fn.pci.sriov_numvfs,
                         vfs);
    }
  }
  return std::nullopt;
}

}  // namespace

ScanShape readScanShape(const Sysfs& sysfs) {
  return ScanShape{.pci_functions = sysfs.list("/sys/bus/pci/devices"),  // list() sorts
                   .rdma_devices = sysfs.list("/sys/class/infiniband")};
}

std::optional<std::string> shapeChange(const Sysfs& sysfs, const NodeInventory& inv,
                                       const ScanShape& at_scan) {
  const ScanShape now = readScanShape(sysfs);
  if (now.pci_functions != at_scan.pci_functions) {
    return fmt::format("PCI functions: {} -> {}", at_scan.pci_functions.size(),
                       now.pci_functions.size());
  }
  // Per function first: its words are more precise than the class listing's (an unbound
  // function's RDMA device leaves both).
  for (const NicFunction& fn : inv.nics) {
    if (auto c = functionChange(sysfs, fn)) return c;
  }
  if (now.rdma_devices != at_scan.rdma_devices) {
    return fmt::format("RDMA devices now [{}]", fmt::join(now.rdma_devices, ","));
  }
  return std::nullopt;
}

}  // namespace rdmanet::dp
