// libFuzzer target over the ethtool statistics decoder (common/net/ethtool_stats.h). The input
// is: u32 the count asked for, u32 the length of the ETHTOOL_GSTRINGS reply, that reply, then
// the ETHTOOL_GSTATS reply (seeds built from the <linux/ethtool.h> layout, make_seeds.py).
// Invariants: no crash, no read out of bounds, never more statistics than asked for.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/net/ethtool_stats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint32_t asked = 0;
  uint32_t strings_len = 0;
  std::memcpy(&asked, data, 4);
  std::memcpy(&strings_len, data + 4, 4);
  const std::span<const uint8_t> rest(data + 8, size - 8);
  if (strings_len > rest.size()) return 0;
  const auto stats =
      rdmanet::decodeEthtoolStats(asked, rest.first(strings_len), rest.subspan(strings_len));
  if (stats.size() > asked) __builtin_trap();
  return 0;
}
