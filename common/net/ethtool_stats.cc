#include "common/net/ethtool_stats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdmanet {
namespace {

// A driver with more statistics than this is not one we know (mlx5 has about 1,500 with 64
// channels); refusing it bounds what one scrape allocates.
constexpr uint32_t kMaxStats = 16384;

int ethtool(int sock, const std::string& ifname, void* data) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(data);
  return ::ioctl(sock, SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
}

Error failure(int err, const std::string& what) {
  return errnoError(err == ENODEV ? ErrorCode::kDeviceNotFound : ErrorCode::kNetlinkFailure, err,
                    what);
}

}  // namespace

EthtoolStats decodeEthtoolStats(uint32_t asked, std::span<const uint8_t> strings_reply,
                                std::span<const uint8_t> values_reply) {
  ethtool_gstrings strings{};
  ethtool_stats values{};
  if (strings_reply.size() < sizeof(strings) || values_reply.size() < sizeof(values)) return {};
  std::memcpy(&strings, strings_reply.data(), sizeof(strings));
  std::memcpy(&values, values_reply.data(), sizeof(values));
  const auto names = strings_reply.subspan(sizeof(strings));
  const auto data = values_reply.subspan(sizeof(values));
  // A driver whose set changed between the calls (a channel count change) answers fewer.
  const size_t got = std::min({size_t{asked}, size_t{strings.len}, size_t{values.n_stats},
                               names.size() / ETH_GSTRING_LEN, data.size() / sizeof(uint64_t)});
  EthtoolStats out;
  out.reserve(got);
  for (size_t i = 0; i < got; ++i) {
    const char* s = reinterpret_cast<const char*>(names.data()) + i * ETH_GSTRING_LEN;
    uint64_t v = 0;
    std::memcpy(&v, data.data() + i * sizeof(uint64_t), sizeof(v));
    out.emplace_back(std::string(s, strnlen(s, ETH_GSTRING_LEN)), v);
  }
  return out;
}

Result<std::unique_ptr<IoctlEthtoolStats>> IoctlEthtoolStats::open() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoError(ErrorCode::kNetlinkFailure, errno, "ethtool socket");
  return std::unique_ptr<IoctlEthtoolStats>(new IoctlEthtoolStats(Fd(fd)));
}

Result<EthtoolStats> IoctlEthtoolStats::stats(const std::string& ifname) {
  const std::string what = "reading ethtool statistics of " + ifname;
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) return failure(ENODEV, what);
  // ETHTOOL_GSSET_INFO with one bit set answers the count in the flexible array after the
  // header: room for it is made with a u64 buffer (a struct member cannot follow a flexible one).
  uint64_t sset_buf[(sizeof(ethtool_sset_info) + sizeof(uint32_t) + 7) / 8] = {};
  auto* sset = reinterpret_cast<ethtool_sset_info*>(sset_buf);
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = 1ULL << ETH_SS_STATS;
  if (int e = ethtool(sock_.get(), ifname, sset); e != 0) return failure(e, what);
  // The mask comes back with the bit cleared when the driver has no statistics set.
  const uint32_t n = (sset->sset_mask & (1ULL << ETH_SS_STATS)) != 0 ? sset->data[0] : 0;
  if (n == 0) return failure(EOPNOTSUPP, what);
  if (n > kMaxStats) return failure(E2BIG, what);

  // Both replies are variable-length structs: the header, then n strings / n u64 values.
  std::vector<uint64_t> strings_buf((sizeof(ethtool_gstrings) + size_t{n} * ETH_GSTRING_LEN + 7) /
                                    8);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buf.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = n;
  if (int e = ethtool(sock_.get(), ifname, strings); e != 0) return failure(e, what);
  std::vector<uint64_t> values_buf(sizeof(ethtool_stats) / 8 + n + 1);
  auto* values = reinterpret_cast<ethtool_stats*>(values_buf.data());
  values->cmd = ETHTOOL_GSTATS;
  values->n_stats = n;
  if (int e = ethtool(sock_.get(), ifname, values); e != 0) return failure(e, what);
  return decodeEthtoolStats(
      n, {reinterpret_cast<const uint8_t*>(strings_buf.data()), strings_buf.size() * 8},
      {reinterpret_cast<const uint8_t*>(values_buf.data()), values_buf.size() * 8});
}

}  // namespace rdmanet
