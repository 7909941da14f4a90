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
};

struct GpuFunction {
  PciFunction pci;
  PciePlacement placement;
};

struct NodeInventory {
  std::vector<NicFunction> nics;  // every network-class function (PFs and VFs), by address
  std::vector<GpuFunction> gpus;  // NVIDIA display/3D functions, by address
  // Closest distance from each NIC function to any GPU (absent when there are no GPUs).
  std::map<PciAddress, Distance> nearest_gpu;

  const NicFunction* nic(const PciAddress& a) const;
};

// NVIDIA (10de) with a display-controller class (0x03xxxx: VGA 0300, 3D 0302).
bool isGpu(const PciFunction& f);

// Scans the node. Never fails as a whole: a function that cannot be read is skipped.
NodeInventory scanNode(const Sysfs& sysfs);

}  // namespace rdmanet
