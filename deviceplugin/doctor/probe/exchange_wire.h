#pragma once
// The tcp exchange's pure parts (probe.h, --exchange tcp): the message each end sends the other
// over TCP before its QP leaves INIT, the choice of device and GID, and the MTU search. The
// verbs and sockets around them are in probe_exchange.cc.
//
// Message (big-endian, 64 bytes): "RDPX", version 1, 3 bytes zero, QP number, PSN, GID (16),
// write-buffer address (8), rkey, buffer length, the sender's interface MTU, its port's active
// MTU (the IB enum, 1..5), 4 bytes zero. A peer speaking another version is refused by name.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/rdma/rdma_verbs.h"

namespace rdmanet::doctor::exchange {

inline constexpr size_t kHelloBytes = 64;
inline constexpr uint8_t kHelloVersion = 1;

struct Hello {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  std::array<uint8_t, 16> gid{};
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint32_t len = 0;
  uint32_t netdev_mtu = 0;
  uint32_t active_mtu = 0;  // IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5

  bool operator==(const Hello&) const = default;
};

std::vector<uint8_t> encodeHello(const Hello& h);
// Error 103 naming what is wrong: short, not "RDPX", another version.
Result<Hello> decodeHello(const std::vector<uint8_t>& bytes);

// "::ffff:a.b.c.d" in the sysfs spelling (0000:...:ffff:xxxx:xxxx) for an IPv4 address in dotted
// form; empty when it is not one.
std::string ipv4MappedGid(const std::string& ipv4);

// The GID entry the QP uses: `want` when >= 0 (error 100 when the port has no such valid entry),
// else the RoCE v2 GID of `ipv4` when the port has it, else its first RoCE v2 IPv4-mapped GID,
// else its first RoCE v2 GID. Error 100 when it has none (the RDMA device carries no RoCE v2).
Result<PortGid> pickGid(const PortFacts& port, int want, const std::string& ipv4);

// What the probe knows about the candidate devices and the interface it probes through.
struct DeviceCandidate {
  std::string name{};
  std::string node_guid{};  // "0211:22ff:fe33:4455", the sysfs spelling
  bool has_roce_v2 = false;
  std::vector<std::string> gids{};  // valid GIDs of port 1, sysfs spelling
};
struct InterfaceFacts {
  std::string name{};
  std::string ipv4{};
  std::string mac{};  // "02:11:22:33:44:55"
};
// The RDMA device to probe with, in this order:
//   1. `requested` (--device);
//   2. the first device of `nccl_ib_hca` ($NCCL_IB_HCA as the device plugin sets it:
//      "=mlx5_2:1,mlx5_3" -> mlx5_2);
//   3. the device with a GID for the interface's IPv4 address (a RoCE device on the interface);
//   4. the device whose node GUID is the interface MAC's EUI-64 (Soft-RoCE made over a slave of
//      the interface, which shares its MAC; rdma_rxe derives the GUID so);
//   5. the only device with a RoCE v2 GID.
// Error 100 naming the candidates when none of these picks exactly one.
Result<std::string> pickDevice(const std::string& requested, const std::string& nccl_ib_hca,
                               const std::vector<DeviceCandidate>& devices,
                               const InterfaceFacts& iface);
// "02:11:22:33:44:55" -> "0011:22ff:fe33:4455" (the universal/local bit flipped, ff:fe inserted);
// empty for anything else.
std::string macToEui64Guid(const std::string& mac);

// The largest size in [lo, hi] for which `crosses` is true, assuming it is true up to some size
// and false above (a path MTU); nullopt when not even `lo` crosses. About log2(hi - lo) calls.
std::optional<int> largestCrossing(int lo, int hi, const std::function<bool(int)>& crosses);

}  // namespace rdmanet::doctor::exchange
