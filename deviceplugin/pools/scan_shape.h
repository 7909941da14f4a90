#pragma once
// The periodic resync's cheap question: does sysfs still show the node the last scan read?
//
// A full scan reads ~30 files per function; at 8 PFs x 127 VFs that is ~300 ms of CPU every
// resync, for a safety net that almost never finds anything (uevents and netlink report the
// changes). What a scan's result depends on and can change is few things per function: which
// functions exist, their driver, their netdev and RDMA device names, a PF's VF count, and the
// software RDMA devices. ScanShape records the two node-wide listings at scan time; shapeChange
// compares them and the per-function facts (against the inventory itself) with what sysfs shows
// now, at ~3 reads per function. Only a difference costs a full scan.
// What changes without changing the shape (RDMA port state, PF link state) is re-read by the
// caller (NodePools::resync).

#include <optional>
#include <string>
#include <vector>

#include "common/base/sysfs.h"
#include "common/inventory/node.h"

namespace rdmanet::dp {

struct ScanShape {
  std::vector<std::string> pci_functions{};  // /sys/bus/pci/devices, sorted
  std::vector<std::string> rdma_devices{};   // /sys/class/infiniband, sorted

  bool operator==(const ScanShape&) const = default;
};

// The two listings, as they are now (call right before a scan, so nothing slips in between).
ScanShape readScanShape(const Sysfs& sysfs);

// The first difference between what `inv` was scanned from (with `at_scan`) and sysfs now, said
// in words for the debug log ("0000:03:00.2: driver mlx5_core -> vfio-pci"); nothing when none.
std::optional<std::string> shapeChange(const Sysfs& sysfs, const NodeInventory& inv,
                                       const ScanShape& at_scan);

}  // namespace rdmanet::dp
