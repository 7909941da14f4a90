#pragma once
// LldpTable: each port's LLDP neighbour, kept for the TTL its last frame gave (802.1AB's
// rxInfoTTL): a switch that stops sending, or a cable moved to a host that sends nothing, is
// forgotten when the TTL runs out; a frame with TTL 0 (the switch port shutting down) forgets it
// at once.
//
// A port's neighbour changes at most once per kHoldDown. Whoever can put a frame on the port's
// wire can claim to be its switch (LLDP has no authentication): two senders taking turns, or one
// that changes its story every second, would otherwise republish the node's slices and rewrite
// its Node on every frame. A change sooner than that is ignored (the old neighbour stands until
// its TTL), reported as kHeldDown for the caller to log; a cabling change still shows within
// kHoldDown plus one transmit interval. Pure: time is passed in.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/base/clock.h"
#include "common/net/lldp_frame.h"

namespace rdmanet::dp {

enum class LldpHeard { kSame, kChanged, kHeldDown };

class LldpTable {
 public:
  static constexpr std::chrono::seconds kHoldDown{10};

  // A frame heard on `netdev` at `now`: kChanged when the neighbours changed (a new or different
  // neighbour, or one forgotten by TTL 0), kSame when not (the TTL refreshed), kHeldDown when the
  // frame would have changed them within kHoldDown of the port's last change.
  LldpHeard heard(const std::string& netdev, const LldpNeighbor& n, Clock::time_point now);
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
  std::map<std::string, Clock::time_point> last_change_;  // by port, outliving its entry
};

}  // namespace rdmanet::dp
