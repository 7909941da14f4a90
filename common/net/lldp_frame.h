#pragma once
// LLDP (IEEE 802.1AB) frames: what a switch port says about itself. The daemon reads them on each
// PF to learn the port's neighbour (the leaf switch and its port), from which a rail is named.
//
// Why a parser of our own and not lldpd with liblldpctl: the daemon only needs to receive, and
// only four TLVs. lldpd is a second daemon on every node (its own privilege-separated chroot and
// control socket, in our image or on the host), transmits LLDP of its own by default (changing
// what the switch sees of the node), and liblldpctl answers only while that daemon runs. A
// receive-only AF_PACKET socket needs CAP_NET_RAW and nothing else; the format below is short,
// bounded (a TLV is at most 511 bytes) and fuzzed (tests/common/net/fuzz/lldp_fuzz.cc). lldpd
// is still what the tests send the frames with, as the real peer.
//
// Pure: bytes in, values out.

#include <cstdint>
#include <span>
#include <string>

#include "common/base/result.h"

namespace rdmanet {

inline constexpr uint16_t kEthPLldp = 0x88cc;
// The nearest-bridge group address that LLDP is sent to (802.1AB 7.1): no bridge forwards it.
inline constexpr uint8_t kLldpMulticast[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

struct LldpNeighbor {
  // The IDs as text: a MAC subtype as "aa:bb:cc:dd:ee:ff", a network address as its IPv4 or IPv6
  // text, any other subtype as its bytes when they are printable ASCII, else "0x" and hex.
  std::string chassis_id{};
  int chassis_id_subtype = 0;  // 802.1AB table 8-2: 4 MAC address, 7 locally assigned, ...
  std::string port_id{};
  int port_id_subtype = 0;  // 802.1AB table 8-3: 3 MAC address, 5 interface name, ...
  int ttl_seconds = 0;      // 0: the neighbour is shutting down, forget it now
  // Optional TLVs, "" when absent; printable ASCII kept, any other byte replaced by '?'.
  std::string system_name{};
  std::string port_description{};
  bool operator==(const LldpNeighbor&) const = default;
};

// Parses an LLDPDU: the frame's payload after the Ethernet header (and any VLAN tag). The
// Chassis ID, Port ID and TTL TLVs must come first, in that order, each once; the optional TLVs
// after them may come in any order, an End TLV (or the end of the bytes) ends the PDU, and what
// follows an End TLV (Ethernet padding) is ignored. Error 6 naming the fault otherwise.
Result<LldpNeighbor> parseLldpdu(std::span<const uint8_t> pdu);

}  // namespace rdmanet
