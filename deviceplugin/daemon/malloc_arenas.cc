#include "deviceplugin/daemon/malloc_arenas.h"

#include <malloc.h>

#include <cstdlib>

namespace rdmanet::dp {

void limitMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr) return;  // the operator's value stands
  (void)mallopt(M_ARENA_MAX, kMallocArenas);  // only fails for a bad value, which this is not
}

}  // namespace rdmanet::dp
