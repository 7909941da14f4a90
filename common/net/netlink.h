#pragma once
// Netlink: the small rtnetlink (and RDMA netlink) surface rdmanet needs, as an interface.
//
// One instance belongs to one network namespace: the one its socket was opened in. Work inside
// a pod goes through NetnsRunner, which opens a fresh instance there. The production
// implementation is LibnlNetlink (the only code that includes <netlink/...>); tests use
// FakeNetlink (tests/fakes), an in-memory kernel answering with the same errnos.
//
// Errors: every method returns error 101 (kNetlinkFailure) with sys_errno set to the kernel's
// errno, except: a missing link is 100 (kDeviceNotFound, sys_errno ENODEV); a dump interrupted
// (NLM_F_DUMP_INTR) more than a few times in a row is 11 (kTryAgainLater). Callers that want to
// distinguish "Operation not supported" (a driver refusing a VF knob) check sys_errno ==
// EOPNOTSUPP. Not thread-safe: use one instance per thread.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/base/mac_address.h"
#include "common/base/result.h"
#include "common/net/dcb.h"
#include "common/net/ip.h"

namespace rdmanet {

struct LinkInfo {
  int ifindex = 0;
  std::string name;
  std::string kind;  // IFLA_INFO_KIND: "veth", "macvlan", "vlan", "" for a physical device
  MacAddress mac;
  uint32_t mtu = 0;
  bool admin_up = false;   // IFF_UP
  bool carrier = false;    // IFF_LOWER_UP
  std::string operstate;   // "up", "down", "unknown", "lowerlayerdown", ...
  int parent_ifindex = 0;  // IFLA_LINK (macvlan/vlan lower device), 0 if none
  int num_vfs = 0;         // IFLA_NUM_VF
  // IFLA_PARENT_DEV_NAME: the bus device behind the netdev ("0000:81:10.0" for a PCI function),
  // "" for virtual links. It moves with the netdev, so it identifies a VF inside a pod, where
  // the host's sysfs no longer lists it.
  std::string parent_dev;
  // IFLA_PERM_ADDRESS: the address the driver read from the hardware at probe, which neither a
  // MAC change nor a move between namespaces alters. Zero when the kernel reports none: every
  // virtual link (veth, macvlan, vlan: random or set addresses), and VFs whose driver leaves
  // it unset.
  MacAddress perm_mac;
};

enum class MacvlanMode { kPrivate, kVepa, kBridge, kPassthru };
enum class VfLinkState { kAuto = 0, kEnable = 1, kDisable = 2 };

// A VF's configuration as its PF reports it (IFLA_VFINFO_LIST).
// The PF's per-VF traffic counters (IFLA_VF_STATS), where the driver reports them (mlx5, ice;
// igb does not: the kernel sends it zeros, taken as no reading). Monotonic while the VF exists.
struct VfTraffic {
  uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0;
  uint64_t rx_dropped = 0, tx_dropped = 0;  // 0 on kernels before 5.4 (not reported)
  bool operator==(const VfTraffic&) const = default;
};

struct VfInfo {
  int index = 0;
  MacAddress mac;  // the administrative MAC set through the PF (zero if none)
  uint16_t vlan = 0;
  uint8_t qos = 0;
  uint16_t vlan_proto = 0x8100;  // ETH_P_8021Q or ETH_P_8021AD
  bool spoofchk = false;
  bool trust = false;
  VfLinkState link_state = VfLinkState::kAuto;
  uint32_t min_tx_rate = 0;  // Mb/s, 0 = unlimited
  uint32_t max_tx_rate = 0;
  std::optional<VfTraffic> traffic;  // nullopt: the driver reports no per-VF counters (or zeros)
  bool operator==(const VfInfo&) const = default;
};

struct MacvlanSpec {
  std::string name;
  int master_ifindex = 0;
  MacvlanMode mode = MacvlanMode::kBridge;
  uint32_t mtu = 0;  // 0 = inherit
  std::optional<MacAddress> mac;
  int netns_fd = -1;  // >= 0: create directly in that namespace
};

struct VlanSpec {
  std::string name;
  int link_ifindex = 0;
  uint16_t vlan_id = 0;
  uint16_t proto = 0x8100;
  // IFLA_VLAN_EGRESS_QOS: socket priority -> 802.1p PCP.
  std::vector<std::pair<uint32_t, uint32_t>> egress_qos;
  uint32_t mtu = 0;
  int netns_fd = -1;
};

enum class RdmaNetnsMode { kShared, kExclusive };

// One port of an RDMA device visible from a namespace, as `rdma link show` lists it. In
// exclusive RDMA netns mode only the namespace's own devices are visible; in shared mode all are.
struct RdmaLink {
  std::string device;  // "mlx5_1"
  uint32_t port = 0;
  // The port's netdev when it lives in the caller's namespace (the kernel reports it only then).
  int netdev_ifindex = 0;
  std::string netdev;
  bool operator==(const RdmaLink&) const = default;
};

class Netlink {
 public:
  virtual ~Netlink() = default;

  // Links. Lookups fail with 100 when absent.
  virtual Result<LinkInfo> linkByName(const std::string& name) = 0;
  virtual Result<LinkInfo> linkByIndex(int ifindex) = 0;
  virtual Result<std::vector<LinkInfo>> links() = 0;  // full dump, retried on NLM_F_DUMP_INTR

  virtual Status setUp(int ifindex, bool up) = 0;
  // The link must be down to rename (EBUSY otherwise; kernels >= 6.x also allow a running link).
  virtual Status rename(int ifindex, const std::string& name) = 0;
  virtual Status setMtu(int ifindex, uint32_t mtu) = 0;
  virtual Status setMac(int ifindex, const MacAddress& mac) = 0;
  // Moves the link into the namespace of `netns_fd`; afterwards it is gone from this one.
  virtual Status moveToNetns(int ifindex, int netns_fd) = 0;

  // Creates a link; returns its ifindex when it lives in this namespace, 0 when it was created
  // in another one (netns_fd set). EEXIST when the name is taken.
  virtual Result<int> addMacvlan(const MacvlanSpec& spec) = 0;
  virtual Result<int> addVlan(const VlanSpec& spec) = 0;
  virtual Status deleteLink(int ifindex) = 0;

  // SR-IOV, through the PF.
  virtual Result<std::vector<VfInfo>> vfs(int pf_ifindex) = 0;
  virtual Status setVfMac(int pf_ifindex, int vf, const MacAddress& mac) = 0;
  virtual Status setVfVlan(int pf_ifindex, int vf, uint16_t vlan, uint8_t qos, uint16_t proto) = 0;
  virtual Status setVfSpoofchk(int pf_ifindex, int vf, bool on) = 0;
  virtual Status setVfTrust(int pf_ifindex, int vf, bool on) = 0;
  virtual Status setVfLinkState(int pf_ifindex, int vf, VfLinkState state) = 0;
  virtual Status setVfRate(int pf_ifindex, int vf, uint32_t min_mbps, uint32_t max_mbps) = 0;

  // Addresses and routes. Adding an existing one is EEXIST; deleting a missing one is success.
  virtual Result<std::vector<IpPrefix>> addresses(int ifindex) = 0;
  virtual Status addAddress(int ifindex, const IpPrefix& prefix) = 0;
  virtual Status deleteAddress(int ifindex, const IpPrefix& prefix) = 0;
  virtual Result<std::vector<Route>> routes(int ifindex) = 0;
  virtual Status addRoute(const Route& route) = 0;
  virtual Status deleteRoute(const Route& route) = 0;

  // Egress shaping: a TBF qdisc as the link's root, holding what the kernel sends through the
  // link to `mbps` Mbit/s (1 and up); it replaces any root qdisc, and goes with the link.
  // egressRate: the rate of the link's root TBF in Mbit/s (rounded down), none when the root
  // qdisc is another (the default one included). Traffic an HCA sends itself (RoCE) never passes
  // a qdisc: this shapes the kernel's traffic only.
  virtual Status setEgressRate(int ifindex, uint32_t mbps) = 0;
  virtual Result<std::optional<uint64_t>> egressRate(int ifindex) = 0;

  // DCB (RTM_GETDCB, IEEE attributes) of a port. A driver without DCB support yields a
  // DcbState with supported == false, not an error.
  virtual Result<DcbState> dcb(const std::string& ifname) = 0;

  // RDMA netlink: the system netns mode, moving an RDMA device into a namespace, and the ports
  // of the devices visible here with their netdevs.
  virtual Result<RdmaNetnsMode> rdmaNetnsMode() = 0;
  virtual Status moveRdmaToNetns(const std::string& rdma_dev, int netns_fd) = 0;
  virtual Result<std::vector<RdmaLink>> rdmaLinks() = 0;
};

}  // namespace rdmanet
