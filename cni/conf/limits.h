#pragma once
// The size limits on everything the plugin reads, in one place (README, "Input limits").
//
// The rule that ties them together: whatever ADD accepts, DEL, CHECK and GC must be able to read
// back, or the attachment could never be released. So the state reader's limits are derived
// from the netconf's and the IPAM delegate's, and StateStore::save refuses a state above them
// (it cannot happen with these numbers; the check keeps it that way if they change).

#include <cstddef>

namespace rdmanet::cni {

// stdin (the netconf, prevResult included). Also the bound on the netconf once re-serialised:
// numbers are written out in full ("1e14" becomes "100000000000000.0") and that is what the
// state file stores.
inline constexpr size_t kMaxConfigBytes = 1u << 20;
// Nested objects and arrays. The deepest thing the spec and the runtimes put in a netconf is
// about 5 levels (prevResult.ips[].address, ipam.ranges[][]); nlohmann's serialiser, copy and
// comparison recurse, so unbounded nesting is a stack overflow.
inline constexpr int kMaxJsonDepth = 64;
// One string value or object key.
inline constexpr size_t kMaxJsonStringBytes = 64u << 10;
// What an IPAM delegate may print (result or error JSON).
inline constexpr size_t kMaxDelegateOutputBytes = 1u << 20;

// A state file holds the netconf (without prevResult), a copy of its "ipam" object, and the
// result: prevResult merged with the delegate's result, both re-serialised from typed fields
// (at most about twice their input: every entry gets its default keys written out), plus fixed
// fields. Its members nest the netconf one level down.
inline constexpr size_t kMaxStateBytes =
    kMaxConfigBytes /* conf */ + kMaxConfigBytes /* ipam */ +
    2 * (kMaxConfigBytes + kMaxDelegateOutputBytes) /* result */
    + (64u << 10);
inline constexpr int kMaxStateDepth = kMaxJsonDepth + 1;

// What one parse accepts.
struct JsonLimits {
  size_t max_bytes;
  int max_depth;
  size_t max_string;
};
inline constexpr JsonLimits kConfigLimits{kMaxConfigBytes, kMaxJsonDepth, kMaxJsonStringBytes};
inline constexpr JsonLimits kDelegateLimits{kMaxDelegateOutputBytes, kMaxJsonDepth,
                                            kMaxJsonStringBytes};
inline constexpr JsonLimits kStateLimits{kMaxStateBytes, kMaxStateDepth, kMaxJsonStringBytes};

}  // namespace rdmanet::cni
