#pragma once
// Test-only builder of netlink payload bytes (fixed header + nlattr TLVs, nests), to feed the
// pure decoders with exactly what the kernel would send.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace rdmanet::testing {

class NlBytes {
 public:
  template <typename T>
  NlBytes& raw(const T& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof(T));
    pad();
    return *this;
  }
  NlBytes& attr(uint16_t type, const void* data, size_t len) {
    const uint16_t total = static_cast<uint16_t>(4 + len);
    append(&total, 2);
    append(&type, 2);
    append(data, len);
    pad();
    return *this;
  }
  template <typename T>
  NlBytes& attr(uint16_t type, const T& v) {
    return attr(type, &v, sizeof(T));
  }
  NlBytes& str(uint16_t type, const std::string& s) { return attr(type, s.c_str(), s.size() + 1); }
  NlBytes& begin(uint16_t type) {
    open_.push_back(buf_.size());
    const uint16_t zero = 0;
    const uint16_t t = static_cast<uint16_t>(type | 0x8000);  // NLA_F_NESTED, as the kernel sets
    append(&zero, 2);
    append(&t, 2);
    return *this;
  }
  NlBytes& end() {
    const size_t start = open_.back();
    open_.pop_back();
    const uint16_t len = static_cast<uint16_t>(buf_.size() - start);
    std::memcpy(buf_.data() + start, &len, 2);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return buf_; }

 private:
  void append(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  void pad() {
    while (buf_.size() % 4) buf_.push_back(0);
  }
  std::vector<uint8_t> buf_;
  std::vector<size_t> open_;
};

}  // namespace rdmanet::testing
