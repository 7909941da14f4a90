#pragma once
// LldpTable: each port's LLDP neighbour, kept for the TTL its last frame gave (802.1AB's
// rxInfoTTL): a switch that stops sending, or a cable moved to a host that sends nothing, is
// forgotten when the TTL runs out; a frame with TTL 0 (the switch port shutting down) forgets it
// at once. Pure: time is passed in.

#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/base/clock.h"
#include "common/net/lldp_frame.h"

namespace rdmanet::dp {

class LldpTable {
 public:
  // A frame heard on `netdev` at `now`. Returns whether the neighbours changed.
  bool heard(const std::string& netdev, const LldpNeighbor& n, Clock::time_point now);
  // Forgets the neighbours whose TTL ran out by `now`; whether any were.
  bool expire(Clock::time_point now);
  // Forgets the neighbours of netdevs not in `ports` (no longer a port); whether any were.
  bool retain(const std::set<std::string>& ports);
  // When the next neighbour's TTL runs out, if any.
  std::optional<Clock::time_point> nextExpiry() const;
  std::map<std::string, LldpNeighbor> neighbors() const;

 private:
  struct Entry {
    LldpNeighbor neighbor{};
    Clock::time_point until{};
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace rdmanet::dp
