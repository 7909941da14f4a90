#include "deviceplugin/doctor/probe/exchange_wire.h"

#include <arpa/inet.h>
#include <endian.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace rdmanet::doctor::exchange {
namespace {

constexpr char kMagic[4] = {'R', 'D', 'P', 'X'};

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  v = htobe32(v);
  std::memcpy(b.data() + at, &v, 4);
}
uint32_t get32(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return be32toh(v);
}

Error noDevice(const std::string& msg) { return makeError(ErrorCode::kDeviceNotFound, msg); }

}  // namespace

std::vector<uint8_t> encodeHello(const Hello& h) {
  std::vector<uint8_t> b(kHelloBytes, 0);
  std::memcpy(b.data(), kMagic, 4);
  b[4] = kHelloVersion;
  put32(b, 8, h.qpn);
  put32(b, 12, h.psn);
  std::memcpy(b.data() + 16, h.gid.data(), 16);
  const uint64_t addr = htobe64(h.addr);
  std::memcpy(b.data() + 32, &addr, 8);
  put32(b, 40, h.rkey);
  put32(b, 44, h.len);
  put32(b, 48, h.netdev_mtu);
  put32(b, 52, h.active_mtu);
  return b;
}

Result<Hello> decodeHello(const std::vector<uint8_t>& b) {
  if (b.size() < kHelloBytes) {
    return makeError(
        ErrorCode::kRdmaFailure,
        fmt::format("the peer sent {} bytes, not a {}-byte probe hello", b.size(), kHelloBytes));
  }
  if (std::memcmp(b.data(), kMagic, 4) != 0) {
    return makeError(ErrorCode::kRdmaFailure,
                     "the peer is not an rdmanet probe in tcp exchange mode (no \"RDPX\")");
  }
  if (b[4] != kHelloVersion) {
    return makeError(ErrorCode::kRdmaFailure,
                     fmt::format("the peer speaks probe exchange version {}, this probe {}", b[4],
                                 kHelloVersion));
  }
  Hello h;
  h.qpn = get32(b, 8);
  h.psn = get32(b, 12);
  std::memcpy(h.gid.data(), b.data() + 16, 16);
  uint64_t addr;
  std::memcpy(&addr, b.data() + 32, 8);
  h.addr = be64toh(addr);
  h.rkey = get32(b, 40);
  h.len = get32(b, 44);
  h.netdev_mtu = get32(b, 48);
  h.active_mtu = get32(b, 52);
  return h;
}

std::string ipv4MappedGid(const std::string& ipv4) {
  in_addr a{};
  if (inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return {};
  const auto* p = reinterpret_cast<const uint8_t*>(&a.s_addr);
  return fmt::format("0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}", p[0], p[1], p[2],
                     p[3]);
}

Result<PortGid> pickGid(const PortFacts& port, int want, const std::string& ipv4) {
  if (want >= 0) {
    for (const auto& g : port.gids) {
      if (g.index == want) return g;
    }
    return noDevice(fmt::format("port {} has no valid GID at index {}", port.num, want));
  }
  const std::string mapped = ipv4MappedGid(ipv4);
  const PortGid* first_v4 = nullptr;
  const PortGid* first = nullptr;
  for (const auto& g : port.gids) {
    if (g.type != GidType::kRoceV2) continue;
    if (!mapped.empty() && g.gid == mapped) return g;
    if (!first) first = &g;
    if (!first_v4 && g.gid.starts_with("0000:0000:0000:0000:0000:ffff:")) first_v4 = &g;
  }
  if (first_v4) return *first_v4;
  if (first) return *first;
  return noDevice(
      fmt::format("port {} has no RoCE v2 GID (no address on its netdev yet?)", port.num));
}

std::string macToEui64Guid(const std::string& mac) {
  // Exactly "xx:xx:xx:xx:xx:xx", two hex digits each (from_chars takes no sign, no 0x, no blank).
  if (mac.size() != 17) return {};
  unsigned b[6];
  for (size_t i = 0; i < 6; ++i) {
    const char* p = mac.data() + 3 * i;
    if (i < 5 && p[2] != ':') return {};
    const auto [end, ec] = std::from_chars(p, p + 2, b[i], 16);
    if (ec != std::errc() || end != p + 2) return {};
  }
  return fmt::format("{:02x}{:02x}:{:02x}ff:fe{:02x}:{:02x}{:02x}", b[0] ^ 2u, b[1], b[2], b[3],
                     b[4], b[5]);
}

Result<std::string> pickDevice(const std::string& requested, const std::string& nccl_ib_hca,
                               const std::vector<DeviceCandidate>& devices,
                               const InterfaceFacts& iface) {
  const auto listed = [&](const std::string& name) {
    for (const auto& d : devices) {
      if (d.name == name) return true;
    }
    return false;
  };
  if (!requested.empty()) {
    if (listed(requested)) return requested;
    return noDevice(fmt::format("no RDMA device {}", requested));
  }
  if (!nccl_ib_hca.empty()) {
    std::string first = nccl_ib_hca.substr(0, nccl_ib_hca.find(','));
    if (first.starts_with('=') || first.starts_with('^')) first.erase(0, 1);
    first = first.substr(0, first.find(':'));
    if (listed(first)) return first;
    return noDevice(fmt::format("NCCL_IB_HCA names {}, which this container does not see",
                                first.empty() ? nccl_ib_hca : first));
  }
  const auto only = [](const std::vector<const DeviceCandidate*>& c) -> std::optional<std::string> {
    if (c.size() == 1) return c.front()->name;
    return std::nullopt;
  };
  const std::string mapped = ipv4MappedGid(iface.ipv4);
  std::vector<const DeviceCandidate*> by_ip, by_guid, roce;
  const std::string guid = macToEui64Guid(iface.mac);
  for (const auto& d : devices) {
    if (!mapped.empty() && std::find(d.gids.begin(), d.gids.end(), mapped) != d.gids.end()) {
      by_ip.push_back(&d);
    }
    if (!guid.empty() && d.node_guid == guid) by_guid.push_back(&d);
    if (d.has_roce_v2) roce.push_back(&d);
  }
  if (auto n = only(by_ip)) return *n;
  if (auto n = only(by_guid)) return *n;
  if (auto n = only(roce)) return *n;
  std::string names;
  for (const auto& d : devices) names += (names.empty() ? "" : ", ") + d.name;
  return noDevice(
      fmt::format("cannot tell which RDMA device belongs to {} ({}): {}; give --device",
                  iface.name.empty() ? "the interface" : iface.name,
                  iface.ipv4.empty() ? "no IPv4 address" : iface.ipv4,
                  devices.empty() ? std::string("no device is listed") : "candidates " + names));
}

std::optional<int> largestCrossing(int lo, int hi, const std::function<bool(int)>& crosses) {
  if (lo > hi || !crosses(lo)) return std::nullopt;
  // Invariant: lo crosses; everything above hi is known not to (or unknown above the range).
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (crosses(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace rdmanet::doctor::exchange
