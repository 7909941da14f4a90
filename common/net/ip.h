#pragma once
// IP addresses and prefixes as plain values (no libnl types cross module boundaries).

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet {

struct IpAddress {
  int family = 0;                   // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};  // first 4 used for AF_INET

  static Result<IpAddress> parse(std::string_view text);  // error 7 on bad input
  std::string str() const;
  bool isV4() const;
  auto operator<=>(const IpAddress&) const = default;
};

struct IpPrefix {
  IpAddress address;
  int prefix_len = 0;

  // "10.0.0.2/24" or "fd00::2/64". Error 7 on bad input or an out-of-range length.
  static Result<IpPrefix> parse(std::string_view text);
  std::string str() const;
  auto operator<=>(const IpPrefix&) const = default;
};

struct Route {
  IpPrefix dst;  // 0.0.0.0/0 or ::/0 for a default route
  std::optional<IpAddress> gateway;
  int ifindex = 0;  // output interface
  auto operator<=>(const Route&) const = default;
};

}  // namespace rdmanet
