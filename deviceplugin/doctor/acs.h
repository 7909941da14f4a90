#pragma once
// The PCIe ACS (Access Control Services) extended capability of a bridge, read from its config
// space in sysfs (/sys/bus/pci/devices/<bdf>/config: 4096 bytes for PCIe, readable past the
// first 64 bytes by root only).
//
// Extended capabilities form a list from offset 0x100; each header is 32 bits: capability ID
// (bits 15:0), version (19:16), next offset (31:20). ACS is ID 0x000D; its Capability register
// is at +4 and its Control register at +6 (PCIe base spec 7.7.8).

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/base/sysfs.h"

namespace rdmanet::doctor {

inline constexpr uint16_t kExtCapIdAcs = 0x000D;

struct AcsInfo {
  uint16_t offset = 0;  // of the capability header
  uint16_t capability = 0;
  uint16_t control = 0;

  bool sourceValidation() const { return control & 0x0001; }
  bool p2pRequestRedirect() const { return control & 0x0004; }
  bool p2pCompletionRedirect() const { return control & 0x0008; }
  bool upstreamForwarding() const { return control & 0x0010; }
  // Either redirect sends peer-to-peer traffic up to the root complex (GPUDirect slows down).
  bool redirects() const { return p2pRequestRedirect() || p2pCompletionRedirect(); }
  // "SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+", like lspci's ACSCtl line.
  std::string describe() const;
};

// Walks the extended capability list of a config space dump. nullopt when it has no ACS
// capability. Error 7 when the dump is shorter than 4096 bytes (the kernel gives a non-root
// reader only the first 64) or the list loops or points outside the space.
Result<std::optional<AcsInfo>> parseAcs(std::span<const uint8_t> config);

// Reads and parses a function's config space. Error 100 when the file cannot be read.
Result<std::optional<AcsInfo>> readAcs(const Sysfs& sysfs, const PciAddress& bridge);

}  // namespace rdmanet::doctor
