#pragma once
// The two pieces of flag parsing `rdmanet-doctor` and `rdmanet-doctor probe` share: the usage
// error (code 7, message naming the flag) and a bounded integer value.

#include <charconv>
#include <string>

#include "common/base/result.h"

namespace rdmanet::doctor {

inline Error usageError(const std::string& msg) {
  return makeError(ErrorCode::kInvalidConfig, msg);
}

// `v` as an integer in [lo, hi], else a usage error naming `flag`.
inline Result<int> intIn(const std::string& flag, const std::string& v, int lo, int hi) {
  int n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < lo || n > hi) {
    return usageError(flag + ": \"" + v + "\" is not an integer in [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  }
  return n;
}

}  // namespace rdmanet::doctor
