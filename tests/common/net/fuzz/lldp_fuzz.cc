// libFuzzer target over the LLDP parser (common/net/lldp_frame.h): the input is an LLDPDU, the
// bytes after the Ethernet header, as any host or switch on a port's wire may send it. Seeds:
// a frame Debian's lldpd sent, and hand-built TLVs of each ID subtype.
// Invariants: no crash; a PDU that parses has its three mandatory TLVs' values, with names of
// printable ASCII only.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "common/net/lldp_frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto n = rdmanet::parseLldpdu(std::span<const uint8_t>(data, size));
  if (!n.ok()) return 0;
  for (const std::string* s : {&n->system_name, &n->port_description}) {
    for (char c : *s) {
      if (c < 0x20 || c > 0x7e) std::abort();
    }
  }
  if (n->chassis_id.empty() || n->port_id.empty() || n->ttl_seconds < 0) std::abort();
  return 0;
}
