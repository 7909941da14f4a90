#include "common/base/pci_address.h"

#include <fmt/format.h>

#include <optional>

namespace rdmanet {
namespace {

std::optional<unsigned> parseHex(std::string_view s) {
  unsigned v = 0;
  for (char c : s) {
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
  }
  return v;
}

}  // namespace

Result<PciAddress> PciAddress::parse(std::string_view text) {
  auto bad = [&] {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("invalid PCI address \"{}\": want dddd:bb:dd.f in hex", text));
  };
  // "0000:81:00.0": 4 + 1 + 2 + 1 + 2 + 1 + 1 = 12 characters.
  if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return bad();
  auto dom = parseHex(text.substr(0, 4));
  auto bus = parseHex(text.substr(5, 2));
  auto dev = parseHex(text.substr(8, 2));
  auto fn = parseHex(text.substr(11, 1));
  if (!dom || !bus || !dev || !fn || *dev > 0x1f || *fn > 7) return bad();
  return PciAddress{.domain = static_cast<uint16_t>(*dom),
                    .bus = static_cast<uint8_t>(*bus),
                    .device = static_cast<uint8_t>(*dev),
                    .function = static_cast<uint8_t>(*fn)};
}

std::string PciAddress::str() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

}  // namespace rdmanet
