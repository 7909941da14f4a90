#pragma once
// GetPreferredAllocation policies. Pure and deterministic: the same pool and request always give
// the same answer, so kubelet's retries and our tests see one result.
//
// All policies first take every `must_include` ID, then fill up to `size` from `available`:
// - pack: fill one PF before the next (fewest PFs). PFs already holding must-include devices come
//   first, then PFs on the anchor NUMA node, then PFs with more available devices.
// - spread: round-robin over the PFs of the anchor NUMA node, then the others, so each PF carries
//   as few of the pod's devices as possible.
// - gpu-near: the smallest NIC-GPU distance class first (PIX < PXB < PHB < NODE < SYS), on the
//   anchor NUMA node, packing PFs within one class.
// The anchor NUMA node is that of the first must-include device; otherwise (gpu-near) that of
// the closest device to a GPU, otherwise the node with the most available devices.
// Unknown available IDs are ignored; unhealthy devices are offered only if nothing else is.

#include <string>
#include <vector>

#include "deviceplugin/pools/pool.h"

namespace rdmanet::dp {

std::vector<std::string> preferredAllocation(const Pool& pool,
                                             const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             int size);

}  // namespace rdmanet::dp
