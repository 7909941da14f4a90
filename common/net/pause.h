#pragma once
// Link-level (802.3x, "global") pause of an Ethernet port, as `ethtool -a` shows it, behind a
// reader interface of its own: its only consumer, the doctor, needs this one call, so it is
// not a method of the Netlink seam (CONTRIBUTING.md, "Seams").
//
// With PFC on a port, global pause should be off: a PAUSE frame stops every traffic class, so
// one congested lossless queue would stall the lossy ones too, and mlx5 cannot run both.

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/base/result.h"

namespace rdmanet {

struct PauseState {
  bool autoneg = false;  // pause negotiated with the link partner
  bool rx = false;       // honours PAUSE frames it receives
  bool tx = false;       // sends PAUSE frames
  bool on() const { return rx || tx; }
};

class PauseReader {
 public:
  virtual ~PauseReader() = default;
  // The port's pause settings. Errors (sys_errno set): 100 ENODEV when `ifname` is not in this
  // reader's network namespace; 101 EOPNOTSUPP when the driver has no pause settings (veth),
  // other errnos for a failed request.
  virtual Result<PauseState> pause(const std::string& ifname) = 0;
};

// ETHTOOL_MSG_PAUSE_GET_REPLY's attributes (after the genlmsghdr) -> PauseState. Error 101 on
// malformed bytes. Pure, for unit tests with hand-built replies.
Result<PauseState> parsePauseReply(std::span<const uint8_t> attrs);

// PauseReader over ethtool netlink: generic netlink family "ethtool" (resolved once),
// ETHTOOL_MSG_PAUSE_GET with the device named in ETHTOOL_A_PAUSE_HEADER (kernel >= 5.6). Bound
// to the network namespace it was opened in.
class EthtoolPauseReader final : public PauseReader {
 public:
  // Error 101 (EPROTONOSUPPORT / ENOENT) when the kernel has no generic netlink or no ethtool
  // family.
  static Result<std::unique_ptr<EthtoolPauseReader>> open();
  ~EthtoolPauseReader() override;
  Result<PauseState> pause(const std::string& ifname) override;

 private:
  struct Impl;
  explicit EthtoolPauseReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdmanet
