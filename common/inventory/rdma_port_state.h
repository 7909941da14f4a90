#pragma once
// The names of InfiniBand port states, as sysfs spells them after the number in
// /sys/class/infiniband/<dev>/ports/<n>/state ("4: ACTIVE"); libibverbs' ibv_port_state uses the
// same numbers. One table for every reader (the verbs seam, pool health).

#include <iterator>
#include <string_view>

namespace rdmanet {

// DOWN (1), INIT, ARMED, ACTIVE, ACTIVE_DEFER (5); `other` for any other number, NOP (0, "no
// state change") included.
constexpr std::string_view rdmaPortStateName(int state, std::string_view other) {
  constexpr std::string_view kNames[] = {"DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  if (state < 1 || state > static_cast<int>(std::size(kNames))) return other;
  return kNames[state - 1];
}

}  // namespace rdmanet
