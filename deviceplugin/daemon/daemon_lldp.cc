// The daemon's LLDP handling (daemon.h): which ports it listens on, and the neighbours it hears.
#include <fmt/format.h>

#include "deviceplugin/daemon/daemon.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

bool Daemon::listenLldp(bool force) {
  if (!deps_.lldp) return false;
  std::set<std::string> ports = core_.portNetdevs();
  // A port made again under the same name has a new ifindex: the periodic resync (force)
  // re-joins it; a changed set of ports is re-joined at once.
  if (!force && ports == lldp_ports_) return false;
  for (const auto& [port, why] : deps_.lldp->listen(ports)) {
    if (!lldp_ports_.contains(port) || force) {
      logger(Component::kDiscovery)->debug("LLDP on {}: {}", port, why);
    }
  }
  lldp_ports_ = std::move(ports);
  if (!lldp_table_.retain(lldp_ports_)) return false;
  core_.setNeighbors(lldp_table_.neighbors());
  return true;
}

void Daemon::onLldpFrames() {
  auto log = logger(Component::kDiscovery);
  const TimePoint now = deps_.clock->now();
  bool changed = false;
  for (LldpReceived& r : deps_.lldp->drain()) {
    if (!r.neighbor.ok()) {
      // A bad frame does not forget a good neighbour: its TTL does.
      if (lldp_bad_ports_.insert(r.netdev).second) {
        log->warn("{}: LLDP frame ignored: {}", r.netdev, r.neighbor.error().msg);
      }
      continue;
    }
    lldp_bad_ports_.erase(r.netdev);
    const LldpNeighbor& n = *r.neighbor;
    const LldpHeard h = lldp_table_.heard(r.netdev, n, now);
    if (h == LldpHeard::kHeldDown) {
      if (lldp_held_ports_.insert(r.netdev).second) {
        log->warn(
            "{}: LLDP neighbour \"{}\" (chassis {}) port {} ignored: the port's neighbour "
            "changed less than {} s ago (two senders on its wire?)",
            r.netdev, n.system_name, n.chassis_id, n.port_id, LldpTable::kHoldDown.count());
      }
      continue;
    }
    if (h == LldpHeard::kSame) continue;
    lldp_held_ports_.erase(r.netdev);
    changed = true;
    if (n.ttl_seconds == 0) {
      log->info("{}: LLDP neighbour {} port {} shut down", r.netdev, n.chassis_id, n.port_id);
    } else {
      log->info("{}: LLDP neighbour \"{}\" (chassis {}) port {}, rail \"{}\"", r.netdev,
                n.system_name, n.chassis_id, n.port_id,
                railOf(core_.config().rails, n).value_or(""));
    }
  }
  if (changed) applyNeighbors();
}

void Daemon::applyNeighbors() {
  if (core_.setNeighbors(lldp_table_.neighbors())) publish();
}

void Daemon::reportNeighbors() {
  if (!deps_.metrics) return;
  std::map<std::string, PortNeighborInfo> info;
  for (const auto& [port, pn] : core_.portNeighbors()) {
    info.emplace(port, PortNeighborInfo{.switch_name = pn.neighbor.system_name,
                                        .chassis_id = pn.neighbor.chassis_id,
                                        .port_id = pn.neighbor.port_id,
                                        .rail = pn.rail});
  }
  deps_.metrics->setPortNeighbors(std::move(info));
}

}  // namespace rdmanet::dp
