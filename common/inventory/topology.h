#pragma once
// PCIe placement of devices and the NIC-GPU distance classes of `nvidia-smi topo -m`.

#include <optional>
#include <string>
#include <vector>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/base/sysfs.h"
#include "common/inventory/pci.h"

namespace rdmanet {

// Ordered from closest to farthest, so they compare with < .
enum class Distance {
  kPix,   // the same PCIe switch (at most one switch between them)
  kPxb,   // several switches apart, without crossing the host bridge
  kPhb,   // the same root complex (PCIe host bridge)
  kNode,  // different root complexes on the same NUMA node
  kSys,   // across the socket interconnect (different NUMA nodes, or unknown)
};

std::string_view distanceName(Distance d);  // "PIX", "PXB", "PHB", "NODE", "SYS"

struct PciePlacement {
  PciAddress address;
  std::string root_complex;         // "pci0000:80"
  std::vector<PciAddress> bridges;  // from the root port down to the device's parent bridge
  int numa_node = -1;

  bool operator==(const PciePlacement&) const = default;
};

// Reads where a function sits: the chain of PCI bridges above it in /sys/devices.
Result<PciePlacement> readPlacement(const Sysfs& sysfs, const PciAddress& addr);
// The same from a function already read (its sysfs_dir and numa_node), without touching sysfs.
PciePlacement placementOf(const PciFunction& f);
// The distance class between two placed devices (symmetric).
Distance classifyDistance(const PciePlacement& a, const PciePlacement& b);

}  // namespace rdmanet
