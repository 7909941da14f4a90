#include "deviceplugin/daemon/lldp_table.h"

#include <algorithm>

namespace rdmanet::dp {

LldpHeard LldpTable::heard(const std::string& netdev, const LldpNeighbor& n,
                           Clock::time_point now) {
  auto it = entries_.find(netdev);
  if (n.ttl_seconds > 0 && it != entries_.end() && it->second.neighbor == n) {
    it->second.until = now + std::chrono::seconds(n.ttl_seconds);
    return LldpHeard::kSame;
  }
  if (n.ttl_seconds == 0 && it == entries_.end()) return LldpHeard::kSame;  // nothing to forget
  auto last = last_change_.find(netdev);
  if (last != last_change_.end() && now < last->second + kHoldDown) return LldpHeard::kHeldDown;
  last_change_[netdev] = now;
  if (n.ttl_seconds == 0) {
    entries_.erase(it);
  } else {
    entries_[netdev] = Entry{n, now + std::chrono::seconds(n.ttl_seconds)};
  }
  return LldpHeard::kChanged;
}

bool LldpTable::expire(Clock::time_point now) {
  return std::erase_if(entries_, [&](const auto& e) { return e.second.until <= now; }) > 0;
}

bool LldpTable::retain(const std::set<std::string>& ports) {
  std::erase_if(last_change_, [&](const auto& e) { return !ports.contains(e.first); });
  return std::erase_if(entries_, [&](const auto& e) { return !ports.contains(e.first); }) > 0;
}

std::optional<Clock::time_point> LldpTable::nextExpiry() const {
  std::optional<Clock::time_point> next;
  for (const auto& [name, e] : entries_) {
    if (!next || e.until < *next) next = e.until;
  }
  return next;
}

std::map<std::string, LldpNeighbor> LldpTable::neighbors() const {
  std::map<std::string, LldpNeighbor> out;
  for (const auto& [name, e] : entries_) out.emplace(name, e.neighbor);
  return out;
}

}  // namespace rdmanet::dp
