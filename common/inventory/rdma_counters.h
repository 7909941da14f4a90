#pragma once
// RDMA port counters as the driver exposes them in sysfs, per port:
//   /sys/class/infiniband/<dev>/ports/<n>/counters/*     IB PMA counters (symbol_error,
//                                                         port_rcv_data, port_xmit_packets, ...)
//   /sys/class/infiniband/<dev>/ports/<n>/hw_counters/*  the driver's own (mlx5: out_of_sequence,
//                                                         np_cnp_sent, ...; rxe: rcvd_seq_err, ...)
// All are monotonic since the driver loaded. Read by the node doctor and the pod metrics.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/base/sysfs.h"

namespace rdmanet {

// Every counter of one RDMA port ("mlx5_0", 1), by its file name. Unreadable or non-numeric
// files are skipped; nullopt when neither directory exists.
std::optional<std::map<std::string, uint64_t>> readPortCounters(const Sysfs& sysfs,
                                                                const std::string& dev, int port);

// The port numbers of an RDMA device (its ports/ directory), ascending; empty if none.
std::vector<int> rdmaPorts(const Sysfs& sysfs, const std::string& dev);

}  // namespace rdmanet
