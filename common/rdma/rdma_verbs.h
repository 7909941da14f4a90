#pragma once
// RdmaVerbs: what an RDMA device says about its ports through the verbs API (libibverbs), the
// source of truth for the facts sysfs does not carry (the RoCE active MTU, speed and width as
// the HCA negotiated them, each GID entry's type and netdev in one consistent read).
//
// Two sources fill the same PortFacts:
//   - an RdmaVerbs implementation (IbvRdmaVerbs in ibv_verbs.h, FakeRdmaVerbs in tests), when
//     the device is reachable: its uverbs node exists and this process may open it;
//   - sysfs (factsFromSysfs), when it is not: the simulated node, fake trees, a device in
//     another netns. sysfs has no active MTU, so that field stays 0 ("unknown").
// rdmaFacts() tries the first and falls back to the second, and says which it used and why.
//
// Kept out of the static CNI binary on purpose: libibverbs loads its provider plugins with
// dlopen at start-up, which costs the CNI's ADD path time it does not need.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/base/sysfs.h"
#include "common/inventory/rdma.h"

namespace rdmanet {

enum class GidType { kUnknown, kIb, kRoceV1, kRoceV2 };

// "RoCE v2", "IB/RoCE v1" (the kernel's sysfs spelling, which ibv_devinfo follows), "IB".
std::string_view gidTypeName(GidType t);
// The inverse for sysfs gid_attrs/types/N; kUnknown for anything else.
GidType parseGidType(std::string_view s);

struct PortGid {
  int index = 0;
  std::string gid{};  // "fe80:0000:0000:0000:....", the sysfs spelling
  GidType type = GidType::kUnknown;
  std::string ndev{};  // netdev the entry belongs to; empty when none (IB) or unknown
};

struct PortFacts {
  int num = 1;
  std::string state{};          // "ACTIVE", "DOWN", ... (ibv_port_state_str spelling, no PORT_)
  int state_num = 0;            // 4 for ACTIVE
  std::string link_layer{};     // "Ethernet" or "InfiniBand"
  int active_mtu = 0;           // bytes (256..4096); 0: unknown (sysfs has no such file)
  int max_mtu = 0;              // bytes; 0: unknown
  double rate_gbps = 0;         // active speed x width; 0: unknown
  std::string rate{};           // "100 Gb/sec (4X EDR)" as sysfs prints it, or built from verbs
  std::vector<PortGid> gids{};  // valid entries only, by index
};

enum class FactSource { kVerbs, kSysfs };
std::string_view factSourceName(FactSource s);  // "verbs", "sysfs"

struct DeviceFacts {
  std::string name{};
  FactSource source = FactSource::kSysfs;
  std::string fallback_reason{};  // why not verbs, when source is sysfs
  std::vector<PortFacts> ports{};
};

class RdmaVerbs {
 public:
  virtual ~RdmaVerbs() = default;
  // Names of the devices libibverbs lists (empty when there are none or no uverbs support).
  virtual Result<std::vector<std::string>> devices() = 0;
  // Opens `device`, queries every port and its GID table, closes it. Error 100 when no such
  // device is listed; 103 (sys_errno set) when opening or a query fails (EACCES without the
  // uverbs node's permission, ENODEV when it went away).
  virtual Result<DeviceFacts> query(const std::string& device) = 0;
};

// The IB MTU enum's byte values (IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5); 0 for anything else.
int ibMtuBytes(int ibv_mtu_enum);
// The RoCE MTU the kernel derives from a netdev MTU: the largest IB MTU not above the netdev
// MTU minus the RoCE headers (iboe_get_mtu() in include/rdma/ib_addr.h: GRH 40 + UDP 8 + BTH 12
// + XRC ext 4 + AtomicETH 28 + ICRC 4 = 96 bytes), capped by the port's max_mtu when known.
// 9000 -> 4096, 1500 -> 1024, below 352 -> 0 (RoCE not usable).
int roceMtuForNetdevMtu(int netdev_mtu, int max_mtu = 0);
// Per-lane Gbit/s of an ibv_port_attr.active_speed value (1 SDR 2.5 ... 128 NDR 100), 0 unknown,
// and the lane count of active_width (1 -> 1, 2 -> 4, 4 -> 8, 8 -> 12, 16 -> 2), 0 unknown.
double ibSpeedGbps(int active_speed);
int ibWidthLanes(int active_width);
// The Gbit/s figure at the start of a sysfs `rate` file ("100 Gb/sec (4X EDR)" -> 100).
std::optional<double> parseRateGbps(std::string_view rate);

// What sysfs says, in the same shape (active/max MTU unknown). Reads ports/N/rate.
DeviceFacts factsFromSysfs(const Sysfs& sysfs, const RdmaDevice& dev);
// verbs->query() when `verbs` is set and answers, else factsFromSysfs with the reason.
DeviceFacts rdmaFacts(RdmaVerbs* verbs, const Sysfs& sysfs, const RdmaDevice& dev);

}  // namespace rdmanet
