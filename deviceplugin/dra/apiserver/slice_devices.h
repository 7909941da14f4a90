#pragma once
// What the DRA front publishes for each of its devices in the node's ResourceSlices: the
// standard attributes (standard_attributes.h: pcieRoot, pciBusID, numaNode, Multus deviceID and
// resourceName), rdmanet's own under rdmanet.io/ (dra/device_attributes.h, which a container's
// device metadata carries too), the unhealthy taint, and allowMultipleAllocations for a shared
// pool's PF when enabled.
//
//   rdmanet.io/pool              string  the core pool, "rdma/vf"
//   rdmanet.io/pfName            string  the PF's netdev (a VF's PF, or the function itself)
//   rdmanet.io/pfPciAddress      string  the PF's PCI address
//   rdmanet.io/vfIndex           int     a VF's index on its PF
//   rdmanet.io/rdmaDevice        string  "mlx5_3"
//   rdmanet.io/netdev            string  the function's netdev while it is on the host
//   rdmanet.io/linkType          string  "ether" or "infiniband" (a VF: its PF's, so it stays put
//                                        while the VF is in a pod)
//   rdmanet.io/losslessPriority  int     the pool's PFC priority
//   rdmanet.io/losslessDscp      int     the DSCP mapped to it
//   rdmanet.io/gpuDistance       string  PIX/PXB/PHB/NODE/SYS to the nearest GPU
//   rdmanet.io/rail              string  the rail of its port's LLDP neighbour (rail_rule.h)
//   rdmanet.io/switchName        string  that neighbour's system name
//   rdmanet.io/switchChassisId   string  its chassis ID, as text (lldp_frame.h)
//   rdmanet.io/switchPortId      string  the switch port's ID
// Attributes whose value is unknown are left out rather than sent empty.
//
// Bandwidth (KEP-4815), for a VF of a pool with `vfBandwidthMbps` whose PF's link speed is
// known: the VF states capacity rdmanet.io/bandwidth (its share, in bit/s) and consumes that much
// of counter `bandwidth` in its PF's counter set, named like the PF's device (pciDeviceName),
// which holds the PF's link speed. The scheduler then never allocates VFs of one port beyond
// the port's speed. A PF whose speed is unknown (link down) publishes no set and its VFs are
// plain devices until it is known again.
//
// A shared pool's PF published with allowMultipleAllocations, in a pool with
// `claimBandwidthMbps`, states capacity rdmanet.io/bandwidth of its link speed with
// requestPolicy.default of that share (KEP-5075): a claim takes the share unless it asks for
// another amount (`capacity.requests`), and the scheduler admits claims until the speed is used.

#include <vector>

#include "common/base/result.h"
#include "common/base/sysfs.h"
#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

// One device. Errors from the standard attributes (the function left sysfs): the caller skips
// the device until the next rescan drops it.
Result<dra::DraDevice> sliceDevice(const Sysfs& sysfs, const NodeDevice& d, const PoolConfig& pool,
                                   bool allow_multiple_allocations);

// What the node's slices hold.
struct SliceContent {
  std::vector<dra::DraDevice> devices{};
  std::vector<dra::CounterSet> counter_sets{};  // one per PF that a published VF consumes from
};

// Every device of the snapshot, and the counter sets they consume from; devices that fail are
// left out and counted in `skipped`.
SliceContent sliceDevices(const Sysfs& sysfs, const DeviceSnapshot& snap,
                          bool allow_multiple_allocations, int* skipped = nullptr);

}  // namespace rdmanet::dp
