#pragma once
// A port's driver statistics, as `ethtool -S` shows them, behind a reader interface of its own:
// the pod metrics need this one call (per-priority PFC pause counters such as mlx5's
// rx_prio3_pause), so it is not a method of the Netlink seam (CONTRIBUTING.md,
// "Seams").

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/base/fd.h"
#include "common/base/result.h"

namespace rdmanet {

// Name and value of each statistic, in the driver's order.
using EthtoolStats = std::vector<std::pair<std::string, uint64_t>>;

// Decodes the replies of ETHTOOL_GSTRINGS and ETHTOOL_GSTATS asked for `asked` statistics, each
// as the ioctl filled its buffer (struct ethtool_gstrings / ethtool_stats, then the names /
// values). A driver whose set changed between the calls answers fewer: the shortest count wins,
// and no count reaches past `asked` or past its buffer. Pure, for the fuzz tests.
EthtoolStats decodeEthtoolStats(uint32_t asked, std::span<const uint8_t> strings_reply,
                                std::span<const uint8_t> values_reply);

class EthtoolStatsReader {
 public:
  virtual ~EthtoolStatsReader() = default;
  // Every statistic of `ifname`. Errors (sys_errno set): 100 ENODEV when the port is not in this
  // reader's network namespace; 101 EOPNOTSUPP when the driver has no statistics; 101 with the
  // errno for a failed request.
  virtual Result<EthtoolStats> stats(const std::string& ifname) = 0;
};

// EthtoolStatsReader over the SIOCETHTOOL ioctl (ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS,
// ETHTOOL_GSTATS): ethtool netlink has no message for driver statistics. Bound to the network
// namespace its socket was opened in. Not thread-safe (one caller at a time).
class IoctlEthtoolStats final : public EthtoolStatsReader {
 public:
  // Error 101 when no datagram socket can be opened.
  static Result<std::unique_ptr<IoctlEthtoolStats>> open();
  Result<EthtoolStats> stats(const std::string& ifname) override;

 private:
  explicit IoctlEthtoolStats(Fd sock) : sock_(std::move(sock)) {}
  Fd sock_;
};

}  // namespace rdmanet
