#include "common/net/nlattr_view.h"

namespace rdmanet::nlattr {
namespace {

constexpr size_t kHeader = 4;
constexpr uint16_t kTypeMask = 0x3fff;  // NLA_TYPE_MASK: strips NLA_F_NESTED/NLA_F_NET_BYTEORDER

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

}  // namespace

std::string Attr::str() const {
  const auto* p = reinterpret_cast<const char*>(payload.data());
  size_t n = 0;
  while (n < payload.size() && p[n] != '\0') ++n;
  return std::string(p, n);
}

std::optional<Attr> Walker::next() {
  if (malformed_ || rest_.size() < kHeader) return std::nullopt;
  uint16_t len = 0;
  uint16_t type = 0;
  std::memcpy(&len, rest_.data(), 2);
  std::memcpy(&type, rest_.data() + 2, 2);
  if (len < kHeader || len > rest_.size()) {
    malformed_ = true;
    return std::nullopt;
  }
  Attr a{.type = static_cast<uint16_t>(type & kTypeMask),
         .payload = rest_.subspan(kHeader, len - kHeader)};
  const size_t step = align4(len);
  rest_ = step >= rest_.size() ? std::span<const uint8_t>() : rest_.subspan(step);
  return a;
}

std::optional<Attr> find(std::span<const uint8_t> bytes, uint16_t type) {
  Walker w(bytes);
  while (auto a = w.next()) {
    if (a->type == type) return a;
  }
  return std::nullopt;
}

bool wellFormed(std::span<const uint8_t> bytes) {
  Walker w(bytes);
  while (w.next()) {
  }
  return !w.malformed();
}

}  // namespace rdmanet::nlattr
