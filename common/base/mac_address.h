#pragma once
// An Ethernet MAC address. Parsing is strict ("aa:bb:cc:dd:ee:ff", either case).

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet {

struct MacAddress {
  std::array<uint8_t, 6> bytes{};

  static Result<MacAddress> parse(std::string_view text);  // error code 7 on bad input
  std::string str() const;                                 // lowercase, colon-separated
  bool isZero() const;
  bool isMulticast() const { return (bytes[0] & 1) != 0; }

  auto operator<=>(const MacAddress&) const = default;
};

}  // namespace rdmanet
