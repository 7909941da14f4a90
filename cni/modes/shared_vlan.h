#pragma once
// The host VLAN device "<master>.<vlan>" that macvlans with a `vlan` sit on, shared by every
// pod on that VLAN and removed with the last of them.
//
// Users are recorded as a set of attachment keys in <state>/vlan/<link>.json under a per-link
// flock, so concurrent ADD/DEL agree on who is last, and a repeated DEL cannot release twice.
// A VLAN device that existed before rdmanet first used it (an admin's) is never deleted.

#include <cstdint>
#include <string>

#include "cni/modes/plugin_deps.h"
#include "common/base/result.h"

namespace rdmanet::cni {

// "<master>.<vlan>", shortening the master part so the name fits 15 bytes.
std::string sharedVlanName(const std::string& master, uint16_t vlan);
// Every socket priority 0..7 -> `pcp`.
std::vector<std::pair<uint32_t, uint32_t>> egressMapTo(uint8_t pcp);

struct SharedVlanSpec {
  std::string master{};
  uint16_t vlan = 0;
  uint16_t proto = 0x8100;
  uint8_t pcp = 0;
  std::string user{};  // "<containerid>_<ifname>"
};

// Registers `user` and makes sure the link exists and is up. Returns its ifindex. Error 7 if
// the link is already in use with another PCP; netlink errors as they come.
Result<int> acquireSharedVlan(PluginDeps& deps, const SharedVlanSpec& spec);
// Unregisters `user`; deletes the link when nobody is left and rdmanet created it. Idempotent.
Status releaseSharedVlan(PluginDeps& deps, const std::string& link, const std::string& user);

}  // namespace rdmanet::cni
