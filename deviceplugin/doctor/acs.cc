#include "deviceplugin/doctor/acs.h"

#include <fmt/format.h>

#include <vector>

namespace rdmanet::doctor {
namespace {

constexpr size_t kPcieConfigSize = 4096;
constexpr uint16_t kExtCapStart = 0x100;

uint16_t le16(std::span<const uint8_t> c, size_t off) {
  return static_cast<uint16_t>(c[off] | (c[off + 1] << 8));
}
uint32_t le32(std::span<const uint8_t> c, size_t off) {
  return le16(c, off) | (static_cast<uint32_t>(le16(c, off + 2)) << 16);
}

}  // namespace

std::string AcsInfo::describe() const {
  auto bit = [](bool on) { return on ? '+' : '-'; };
  return fmt::format("SrcValid{} ReqRedir{} CmpltRedir{} UpstreamFwd{}", bit(sourceValidation()),
                     bit(p2pRequestRedirect()), bit(p2pCompletionRedirect()),
                     bit(upstreamForwarding()));
}

Result<std::optional<AcsInfo>> parseAcs(std::span<const uint8_t> config) {
  if (config.size() < kPcieConfigSize) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("config space is {} bytes, extended capabilities need {} (read "
                                 "it as root)",
                                 config.size(), kPcieConfigSize));
  }
  uint16_t off = kExtCapStart;
  // Each capability takes at least 4 bytes, so a list longer than this loops.
  for (size_t guard = 0; guard < (kPcieConfigSize - kExtCapStart) / 4; ++guard) {
    const uint32_t hdr = le32(config, off);
    // All-zero (no extended capabilities) or all-ones (function gone) ends the walk.
    if (hdr == 0 || hdr == 0xffffffff) return std::optional<AcsInfo>();
    if ((hdr & 0xffff) == kExtCapIdAcs) {
      if (size_t{off} + 8 > kPcieConfigSize) {
        return makeError(ErrorCode::kInvalidConfig, "ACS capability runs past the config space");
      }
      return std::optional<AcsInfo>(AcsInfo{
          .offset = off, .capability = le16(config, off + 4), .control = le16(config, off + 6)});
    }
    const uint16_t next = static_cast<uint16_t>((hdr >> 20) & 0xffc);
    if (next == 0) return std::optional<AcsInfo>();
    if (next < kExtCapStart || size_t{next} + 4 > kPcieConfigSize) {
      return makeError(
          ErrorCode::kInvalidConfig,
          fmt::format("extended capability at {:#x} points outside ({:#x})", off, next));
    }
    off = next;
  }
  return makeError(ErrorCode::kInvalidConfig, "extended capability list loops");
}

Result<std::optional<AcsInfo>> readAcs(const Sysfs& sysfs, const PciAddress& bridge) {
  auto raw = sysfs.readBytes("/sys/bus/pci/devices/" + bridge.str() + "/config", kPcieConfigSize);
  if (!raw.ok()) {
    return makeError(ErrorCode::kDeviceNotFound,
                     fmt::format("cannot read config space of {}", bridge.str()));
  }
  const std::vector<uint8_t> bytes(raw->begin(), raw->end());
  auto acs = parseAcs(bytes);
  if (!acs.ok()) return acs.error().context(bridge.str());
  return acs;
}

}  // namespace rdmanet::doctor
