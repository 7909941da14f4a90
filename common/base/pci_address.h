#pragma once
// A PCI function address (BDF), parsed strictly: it arrives from untrusted pod input
// (deviceID) and ends up in sysfs paths, so anything but "dddd:bb:dd.f" in hex is rejected.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet {

struct PciAddress {
  uint16_t domain = 0;
  uint8_t bus = 0;
  uint8_t device = 0;    // 0..31
  uint8_t function = 0;  // 0..7

  // Accepts exactly "DDDD:BB:DD.F" (hex, either case). Error code 7 otherwise.
  static Result<PciAddress> parse(std::string_view text);
  // Canonical lowercase "0000:81:00.0", the form sysfs and kubelet use.
  std::string str() const;

  auto operator<=>(const PciAddress&) const = default;
};

}  // namespace rdmanet
