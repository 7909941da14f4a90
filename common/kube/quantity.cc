#include "common/kube/quantity.h"

#include <array>
#include <string>

namespace rdmanet::kube {

std::string decimalQuantity(int64_t value) {
  if (value == 0) return "0";
  static constexpr std::array<const char*, 7> kSuffixes = {"", "k", "M", "G", "T", "P", "E"};
  // Negated as unsigned: INT64_MIN has no positive int64 counterpart.
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  size_t exponent = 0;
  while (exponent + 1 < kSuffixes.size() && magnitude % 1000 == 0) {
    magnitude /= 1000;
    ++exponent;
  }
  return (value < 0 ? "-" : "") + std::to_string(magnitude) + kSuffixes[exponent];
}

}  // namespace rdmanet::kube
