#pragma once
// PCI functions and their SR-IOV relations, read from sysfs.
//
// Reads /sys/bus/pci/devices/<bdf> (a symlink into /sys/devices/pci<dom>:<bus>/...). Nothing
// here throws or logs: a missing optional attribute becomes an empty/-1/nullopt field, a missing
// function is error 100.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/base/sysfs.h"

namespace rdmanet {

struct PciFunction {
  PciAddress address;
  std::string sysfs_dir;    // in-tree canonical dir, "/sys/devices/pci0000:80/.../0000:81:00.0"
  std::string vendor;       // lowercase hex without 0x: "15b3"
  std::string device;       // "101d"
  uint32_t class_code = 0;  // 24-bit class, e.g. 0x020000 (Ethernet), 0x030200 (3D)
  std::string driver;       // bound driver name ("mlx5_core", "vfio-pci"), empty if unbound
  int numa_node = -1;       // -1 when absent or the platform reports none
  std::optional<int> iommu_group;

  // SR-IOV. A PF has sriov_totalvfs > 0 (possibly 0 VFs enabled); a VF has `physfn`.
  int sriov_totalvfs = 0;
  int sriov_numvfs = 0;
  std::vector<PciAddress> vfs;   // virtfn0..N-1, by index; missing links are skipped
  std::optional<PciAddress> pf;  // set on a VF
  std::optional<int> vf_index;   // set on a VF: the N of the PF's virtfnN pointing here

  bool operator==(const PciFunction&) const = default;
  bool isVf() const { return pf.has_value(); }
  bool isPf() const { return sriov_totalvfs > 0; }
  bool isNetwork() const { return (class_code >> 16) == 0x02; }
};

// Every PCI function in /sys/bus/pci/devices, sorted by address. Entries whose link is broken
// or whose name is not a PCI address are skipped.
std::vector<PciAddress> listPciFunctions(const Sysfs& sysfs);
// One function's attributes and SR-IOV relations. Error 100 if it does not exist.
Result<PciFunction> readPciFunction(const Sysfs& sysfs, const PciAddress& addr);
// The PCI function a uevent's DEVPATH belongs to: its last component that is a PCI address
// ("/devices/pci0000:00/0000:00:01.0/0000:03:00.2/net/ens1f0v0" -> 0000:03:00.2); nullopt for
// a virtual device.
std::optional<PciAddress> functionOfDevpath(std::string_view devpath);
// Several functions at once, sorted by address, duplicates dropped; functions that cannot be
// read are left out. Each PF's virtfn links are read once and give the vf_index of its VFs in
// the batch, so a PF with N VFs costs O(N) link reads, not O(N^2) as N readPciFunction() calls.
std::vector<PciFunction> readPciFunctions(const Sysfs& sysfs, std::vector<PciAddress> addrs);

}  // namespace rdmanet
