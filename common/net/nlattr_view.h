#pragma once
// A bounds-checked, read-only walker over netlink attributes (struct nlattr TLVs) in a byte span.
//
// Used by the pure codecs (rtnl_codec, dcb) so they can be unit-tested with hand-built bytes and
// never read past a truncated or malformed message. No libnl types: this file only needs the
// kernel UAPI layout (4-byte header: u16 len, u16 type; payload padded to 4 bytes).

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

namespace rdmanet::nlattr {

struct Attr {
  uint16_t type = 0;  // NLA_TYPE_MASK applied (nested / byte-order flags stripped)
  std::span<const uint8_t> payload;

  // Reads a fixed-size value (u8/u16/u32/struct). nullopt when the payload is too short.
  template <typename T>
  std::optional<T> as() const {
    if (payload.size() < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, payload.data(), sizeof(T));
    return v;
  }
  // A NUL-terminated (or unterminated) string attribute.
  std::string str() const;
};

// Iterates the attributes of `bytes`. After the loop, malformed() tells whether the walk stopped
// on a header that claims more bytes than remain (trailing padding shorter than a header is OK).
class Walker {
 public:
  explicit Walker(std::span<const uint8_t> bytes) : rest_(bytes) {}
  // Returns the next attribute, or nullopt at the end or on malformed bytes.
  std::optional<Attr> next();
  bool malformed() const { return malformed_; }

 private:
  std::span<const uint8_t> rest_;
  bool malformed_ = false;
};

// Finds the first attribute of `type` at this level. nullopt if absent or malformed.
std::optional<Attr> find(std::span<const uint8_t> bytes, uint16_t type);
// True when every attribute header at this level is well-formed.
bool wellFormed(std::span<const uint8_t> bytes);

}  // namespace rdmanet::nlattr
