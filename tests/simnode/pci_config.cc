// The config space a PCIe bridge exposes in sysfs (`config`, 4096 bytes for PCIe). Only what a
// reader walking the capability lists needs is filled in; the rest reads as zero, which the
// kernel also shows for registers a device does not implement.

#include <cstdlib>
#include <string>

#include "tests/simnode/sim_tree.h"

namespace rdmanet::sim {
namespace {

constexpr size_t kConfigSize = 4096;
constexpr uint8_t kCapPtr = 0x40;       // PCI Express capability
constexpr uint16_t kAerOffset = 0x100;  // AER v2 is 0x48 bytes long
constexpr uint16_t kExtCapAer = 0x0001;
constexpr uint16_t kExtCapAcs = 0x000D;
// ACS capability/control bits (PCIe base spec 7.7.8): source validation, translation blocking,
// P2P request redirect, P2P completion redirect, upstream forwarding, direct translated P2P.
constexpr uint16_t kAcsCapabilities = 0x005F;
constexpr uint16_t kAcsRedirectControl = 0x001D;  // SV | RR | CR | UF, what Linux enables

void put8(std::vector<uint8_t>& c, size_t off, uint8_t v) { c[off] = v; }
void put16(std::vector<uint8_t>& c, size_t off, uint16_t v) {
  c[off] = static_cast<uint8_t>(v & 0xff);
  c[off + 1] = static_cast<uint8_t>(v >> 8);
}
void put32(std::vector<uint8_t>& c, size_t off, uint32_t v) {
  put16(c, off, static_cast<uint16_t>(v & 0xffff));
  put16(c, off + 2, static_cast<uint16_t>(v >> 16));
}
uint32_t extHeader(uint16_t id, uint8_t version, uint16_t next) {
  return id | (static_cast<uint32_t>(version & 0xf) << 16) | (static_cast<uint32_t>(next) << 20);
}

}  // namespace

std::vector<uint8_t> bridgeConfigSpace(const BridgeSpec& spec) {
  std::vector<uint8_t> c(kConfigSize, 0);
  put16(c, 0x00, static_cast<uint16_t>(std::strtoul(spec.vendor.c_str(), nullptr, 16)));
  put16(c, 0x02, static_cast<uint16_t>(std::strtoul(spec.device.c_str(), nullptr, 16)));
  put16(c, 0x04, 0x0407);  // I/O, memory, bus master, INTx disabled
  put16(c, 0x06, 0x0010);  // status: capabilities list present
  put8(c, 0x0a, 0x04);     // subclass: PCI-to-PCI bridge
  put8(c, 0x0b, 0x06);     // class: bridge
  put8(c, 0x0e, 0x01);     // header type 1
  put8(c, 0x18, spec.address.bus);
  put8(c, 0x19, spec.secondary_bus);
  put8(c, 0x1a, spec.subordinate_bus);
  put8(c, 0x34, kCapPtr);

  uint16_t port_type = 0x4;  // root port
  if (spec.kind == BridgeKind::kSwitchUpstream) port_type = 0x5;
  if (spec.kind == BridgeKind::kSwitchDownstream) port_type = 0x6;
  put8(c, kCapPtr, 0x10);  // PCI Express capability ID, last in the list
  put8(c, kCapPtr + 1, 0x00);
  const bool has_slot = spec.kind != BridgeKind::kSwitchUpstream;
  put16(c, kCapPtr + 2, static_cast<uint16_t>(0x2 | (port_type << 4) | (has_slot ? 0x100 : 0)));

  // ACS lives on ports that forward peer traffic downwards: root and downstream ports.
  const bool has_acs = spec.kind != BridgeKind::kSwitchUpstream;
  put32(c, kAerOffset, extHeader(kExtCapAer, 2, has_acs ? kAcsCapOffset : 0));
  if (has_acs) {
    put32(c, kAcsCapOffset, extHeader(kExtCapAcs, 1, 0));
    put16(c, kAcsCapOffset + 4, kAcsCapabilities);
    put16(c, kAcsCapOffset + 6, spec.acs_redirect ? kAcsRedirectControl : 0);
  }
  return c;
}

}  // namespace rdmanet::sim
