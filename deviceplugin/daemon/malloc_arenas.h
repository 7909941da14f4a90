#pragma once
// glibc gives each thread that allocates an arena of its own, up to 8 per core, and each keeps
// the pages it touched. The daemon's threads (civetweb's workers, gRPC's, the doctor's) allocate
// little and rarely at once, so their arenas were ~1.9 MB of its resident set for nothing: two
// arenas serve it (measured: VmRSS 16.8 -> 14.9 MB in device-plugin mode with 8 devices).

namespace rdmanet::dp {

// Caps glibc's malloc arenas at kMallocArenas unless the operator set MALLOC_ARENA_MAX, which
// glibc itself reads. Call before the first thread starts.
inline constexpr int kMallocArenas = 2;
void limitMallocArenas();

}  // namespace rdmanet::dp
