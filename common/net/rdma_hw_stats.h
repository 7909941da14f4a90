#pragma once
// An RDMA port's hw counters as RDMA netlink reports them (RDMA_NLDEV_CMD_STAT_GET, what
// `rdma statistic show link DEV/PORT` prints). The probe reads them here rather than in sysfs:
// in shared RDMA netns mode a pod sees the node's devices as compat devices, whose sysfs has no
// ports/N/hw_counters, while nldev answers from any netns that may see the device.

#include <cstdint>
#include <map>
#include <string>

#include "common/base/result.h"

namespace rdmanet {

// Error 100 when no such device is visible from the calling thread's netns; 103 when the kernel
// refuses (EOPNOTSUPP: a driver without hw counters).
Result<std::map<std::string, uint64_t>> readRdmaPortHwCounters(const std::string& device,
                                                               uint32_t port);

}  // namespace rdmanet
