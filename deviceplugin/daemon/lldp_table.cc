#include "deviceplugin/daemon/lldp_table.h"

#include <algorithm>

namespace rdmanet::dp {

bool LldpTable::heard(const std::string& netdev, const LldpNeighbor& n, Clock::time_point now) {
  if (n.ttl_seconds == 0) return entries_.erase(netdev) > 0;
  const Clock::time_point until = now + std::chrono::seconds(n.ttl_seconds);
  auto [it, fresh] = entries_.try_emplace(netdev, Entry{n, until});
  if (fresh) return true;
  const bool changed = !(it->second.neighbor == n);
  it->second = Entry{n, until};
  return changed;
}

bool LldpTable::expire(Clock::time_point now) {
  return std::erase_if(entries_, [&](const auto& e) { return e.second.until <= now; }) > 0;
}

bool LldpTable::retain(const std::set<std::string>& ports) {
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
