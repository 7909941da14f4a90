#pragma once
// Per-priority PFC pause counters from a port's ethtool statistics (`ethtool -S`), for the
// drivers that name them:
//   mlx5: rx_prio<P>_pause, tx_prio<P>_pause (frames) and rx_prio<P>_pause_duration,
//         tx_prio<P>_pause_duration (microseconds the port was paused / pausing)
//   ice:  rx_priority_<P>_xoff.nic, tx_priority_<P>_xoff.nic (XOFF frames; no duration)
// Other statistics are ignored.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/net/ethtool_stats.h"

namespace rdmanet::podnet {

struct PfcCounter {
  int priority = 0;
  std::string direction{};  // "rx" or "tx"
  uint64_t frames = 0;
  std::optional<uint64_t> duration_us{};  // nullopt: the driver does not count it
  bool operator==(const PfcCounter&) const = default;
};

// One entry per (priority, direction) the statistics name, sorted by priority then direction.
std::vector<PfcCounter> pfcCounters(const EthtoolStats& stats);

}  // namespace rdmanet::podnet
