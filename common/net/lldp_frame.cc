#include "common/net/lldp_frame.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <string_view>

namespace rdmanet {
namespace {

enum TlvType : int {
  kEnd = 0,
  kChassisId = 1,
  kPortId = 2,
  kTtl = 3,
  kPortDescription = 4,
  kSystemName = 5,
};
// The ID subtypes whose value is not text (802.1AB tables 8-2 and 8-3).
constexpr int kChassisMac = 4, kChassisNetAddr = 5;
constexpr int kPortMac = 3, kPortNetAddr = 4;
// IANA address family numbers, the first byte of a network-address ID.
constexpr uint8_t kFamilyIpv4 = 1, kFamilyIpv6 = 2;

Error bad(std::string_view what) {
  return makeError(ErrorCode::kDecodeFailure, fmt::format("LLDPDU: {}", what));
}

bool printable(uint8_t c) { return c >= 0x20 && c < 0x7f; }

std::string hex(std::span<const uint8_t> b) {
  std::string out = "0x";
  for (uint8_t c : b) out += fmt::format("{:02x}", c);
  return out;
}

std::string mac(std::span<const uint8_t> b) {
  std::string out;
  for (size_t i = 0; i < b.size(); ++i) out += fmt::format("{}{:02x}", i ? ":" : "", b[i]);
  return out;
}

// An IANA-family-prefixed address, or "" when it is not IPv4 or IPv6 of the right length.
std::string netAddr(std::span<const uint8_t> b) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (b.size() == 5 && b[0] == kFamilyIpv4) {
    return inet_ntop(AF_INET, b.data() + 1, buf, sizeof buf) ? buf : "";
  }
  if (b.size() == 17 && b[0] == kFamilyIpv6) {
    return inet_ntop(AF_INET6, b.data() + 1, buf, sizeof buf) ? buf : "";
  }
  return "";
}

// An ID's value as text, by its subtype's kind (see LldpNeighbor).
std::string idText(std::span<const uint8_t> v, bool is_mac, bool is_addr) {
  if (is_mac && v.size() == 6) return mac(v);
  if (is_addr) {
    if (std::string a = netAddr(v); !a.empty()) return a;
    return hex(v);
  }
  for (uint8_t c : v) {
    if (!printable(c)) return hex(v);
  }
  return {v.begin(), v.end()};
}

std::string sanitized(std::span<const uint8_t> v) {
  std::string out;
  for (uint8_t c : v) out += printable(c) ? static_cast<char>(c) : '?';
  return out;
}

}  // namespace

Result<LldpNeighbor> parseLldpdu(std::span<const uint8_t> pdu) {
  LldpNeighbor n;
  bool have_sysname = false, have_portdesc = false;
  int index = 0;  // TLVs read so far
  size_t off = 0;
  while (off < pdu.size()) {
    if (pdu.size() - off < 2) return bad("truncated TLV header");
    const int type = pdu[off] >> 1;
    const size_t len = ((pdu[off] & 1u) << 8) | pdu[off + 1];
    off += 2;
    if (pdu.size() - off < len) {
      return bad(fmt::format("TLV {} of {} bytes runs past the frame", type, len));
    }
    const std::span<const uint8_t> v = pdu.subspan(off, len);
    off += len;
    // The first three TLVs are Chassis ID, Port ID and TTL, in that order (802.1AB 8.2).
    const int want = index < 3 ? index + 1 : -1;
    if (want > 0 && type != want) {
      return bad(fmt::format("TLV {} where the mandatory TLV {} belongs", type, want));
    }
    if (want < 0 && (type == kChassisId || type == kPortId || type == kTtl)) {
      return bad(fmt::format("mandatory TLV {} repeated", type));
    }
    ++index;
    switch (type) {
      case kEnd:
        return n;  // unreachable before the TTL (checked above); what follows is padding
      case kChassisId:
      case kPortId: {
        // A subtype byte and 1 to 255 bytes of ID.
        if (len < 2 || len > 256) return bad(fmt::format("ID TLV {} of {} bytes", type, len));
        const int sub = v[0];
        const auto id = v.subspan(1);
        if (type == kChassisId) {
          n.chassis_id_subtype = sub;
          n.chassis_id = idText(id, sub == kChassisMac, sub == kChassisNetAddr);
        } else {
          n.port_id_subtype = sub;
          n.port_id = idText(id, sub == kPortMac, sub == kPortNetAddr);
        }
        break;
      }
      case kTtl:
        if (len < 2) return bad(fmt::format("TTL TLV of {} bytes", len));
        n.ttl_seconds = (v[0] << 8) | v[1];
        break;
      case kSystemName:
        // At most one of each optional TLV; a repeated one is ignored (802.1AB 9.2.7.7.1).
        if (!have_sysname) n.system_name = sanitized(v);
        have_sysname = true;
        break;
      case kPortDescription:
        if (!have_portdesc) n.port_description = sanitized(v);
        have_portdesc = true;
        break;
      default:
        break;  // the other TLVs say nothing the daemon uses
    }
  }
  if (index < 3) return bad("missing mandatory TLVs (Chassis ID, Port ID, TTL)");
  return n;
}

}  // namespace rdmanet
