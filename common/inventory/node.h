#pragma once
// The whole node at once: what the device plugin advertises and the doctor checks.

#include <map>
#include <string>
#include <vector>

#include "common/base/sysfs.h"
#include "common/inventory/netdev.h"
#include "common/inventory/pci.h"
#include "common/inventory/rdma.h"
#include "common/inventory/topology.h"

namespace rdmanet {

// A network PCI function with everything known about it.
struct NicFunction {
  PciFunction pci;
  PciePlacement placement;
  std::vector<Netdev> netdevs;
  std::vector<RdmaDevice> rdma;

  bool operator==(const NicFunction&) const = default;
};

struct GpuFunction {
  PciFunction pci;
  PciePlacement placement;

  bool operator==(const GpuFunction&) const = default;
};

struct NodeInventory {
  // Every network-class function (PFs and VFs), sorted by address: nic() relies on it.
  std::vector<NicFunction> nics;
  std::vector<GpuFunction> gpus;  // NVIDIA display/3D functions, by address
  // Closest distance from each NIC function to any GPU (absent when there are no GPUs).
  std::map<PciAddress, Distance> nearest_gpu;

  // O(log n): a binary search of nics.
  const NicFunction* nic(const PciAddress& a) const;

  bool operator==(const NodeInventory&) const = default;
};

// NVIDIA (10de) with a display-controller class (0x03xxxx: VGA 0300, 3D 0302).
bool isGpu(const PciFunction& f);

struct ScanOptions {
  // false: VFs are left out (a PF's `vfs` still names them), and so are their netdevs and RDMA
  // devices: for callers that look at PFs only, like the doctor, whose cost then follows the
  // PFs rather than the VFs.
  bool vfs = true;
  // false: RDMA ports come without their GID tables (the device plugin does not use them).
  bool gids = true;
};

// Scans the node. Never fails as a whole: a function that cannot be read is skipped.
// Linear in the number of functions: every sysfs path is read once, class directories are
// listed once, each PF's virtfn links are read once for all its VFs.
NodeInventory scanNode(const Sysfs& sysfs, const ScanOptions& opts = {});

// Re-reads one PF and the VFs it links to now (with `opts.gids` as the scan had it) (functions,
// placement, netdevs, RDMA devices) and puts them in place of what `inv` had of that PF, dropping
// VFs that are gone; nothing of other functions is read or changed. The result equals a full
// scanNode() when only this PF changed. A PF that vanished is dropped with its VFs. `pf` may be any
// NIC function (one without VFs is re-read alone). Software RDMA devices (rxe, siw) on these
// functions are re-read by their name in `inv`; a new one is not looked for (its own uevent calls
// for a full scan). Returns the addresses re-read, sorted; empty if the PF is gone.
std::vector<PciAddress> rescanPf(const Sysfs& sysfs, const PciAddress& pf, NodeInventory& inv,
                                 const ScanOptions& opts = {});

// The PF whose rescanPf() covers function `fn`: `fn` itself for a NIC function that is not a
// VF, its physfn for a VF. Taken from `inv` when it has `fn`, else read from sysfs (a function
// that appeared since). nullopt for a function that is gone or not a NIC.
std::optional<PciAddress> pfOf(const Sysfs& sysfs, const NodeInventory& inv, const PciAddress& fn);

}  // namespace rdmanet
