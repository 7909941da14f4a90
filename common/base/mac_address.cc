#include "common/base/mac_address.h"

#include <fmt/format.h>

namespace rdmanet {
namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<MacAddress> MacAddress::parse(std::string_view text) {
  MacAddress mac;
  if (text.size() != 17) {
    return makeError(ErrorCode::kInvalidConfig, fmt::format("invalid MAC address \"{}\"", text));
  }
  for (size_t i = 0; i < 6; ++i) {
    const int hi = hexDigit(text[i * 3]);
    const int lo = hexDigit(text[i * 3 + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && text[i * 3 + 2] != ':')) {
      return makeError(ErrorCode::kInvalidConfig, fmt::format("invalid MAC address \"{}\"", text));
    }
    mac.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return mac;
}

std::string MacAddress::str() const {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", bytes[0], bytes[1], bytes[2],
                     bytes[3], bytes[4], bytes[5]);
}

bool MacAddress::isZero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

}  // namespace rdmanet
