#pragma once
// FakeKernel: an in-memory model of the kernel state rdmanet touches through Netlink, with
// per-netns link tables, real errnos and fault injection. Include "tests/fakes/fake_netlink.h"
// for the adapters (FakeNetlink, FakeNetnsRunner) that expose it through the production
// interfaces.
//
// What it models (and the errno it answers with, the same the kernel gives):
// - Namespaces by name; "host" exists from the start. Each has "lo" (ifindex 1) and its own
//   ifindex counter. netnsHandle(name) returns a REAL fd (a dup of a per-namespace memfd) so
//   production code can pass it to moveToNetns / MacvlanSpec::netns_fd and close it normally.
//   A fd that is not a fake namespace -> EINVAL; a closed/bad fd -> EBADF.
// - Links: a physical link has a permanent MAC (its first address unless the spec says), which
//   no setMac changes; virtual links have none. Missing ifindex or name -> ENODEV (error 100).
//   Rename while up -> EBUSY (unless setRenameWhileUpAllowed); to a taken name -> EEXIST; bad name
//   (empty, >= 16 chars, '/', ':', whitespace) -> EINVAL. MTU outside [min_mtu, max_mtu] (or above
//   the lower device's MTU for macvlan/vlan) -> EINVAL. A multicast or zero MAC -> EADDRNOTAVAIL.
//   Deleting a physical link (no kind) -> EOPNOTSUPP; deleting a lower device deletes its
//   macvlans/vlans.
// - Moving a link between namespaces: the link leaves the source, arrives DOWN with its
//   addresses and routes flushed (dev_close + unregister notifiers), keeps its ifindex if free
//   in the target (else gets the next one); a name clash in the target -> EEXIST; "lo" -> EINVAL.
// - deleteNetns(): virtual links (kind != "") are destroyed; physical links (PFs, VFs) and RDMA
//   devices return to "host", renamed "dev<ifindex>" on a name clash, as the kernel does.
// - macvlan: master missing -> ENODEV; a passthru macvlan needs the master to itself and a
//   master that has a passthru macvlan takes no other -> EINVAL. vlan: disabled kernel
//   (setVlanSupported(false), like this host) -> EOPNOTSUPP; id > 4094 -> ERANGE; a proto other
//   than 802.1Q/802.1ad -> EPROTONOSUPPORT; the same id+proto twice on a link -> EEXIST.
// - SR-IOV: addPf() gives a physical link VFs; a VF index >= num_vfs -> EINVAL; a knob marked
//   unsupported (unsupportVfKnob) -> EOPNOTSUPP; vlan > 4095 or qos > 7 -> EINVAL; min > max
//   rate -> EINVAL; vfs() of a non-PF -> empty list.
// - Addresses: duplicate -> EEXIST; prefix length out of range -> EINVAL; delete missing -> ok.
// - Routes (only the ones added; kernel prefix routes are NOT synthesized): IPv4 needs the link
//   up (ENETDOWN); a gateway must sit inside a prefix of an address on the link (IPv6: or be
//   link-local) -> ENETUNREACH; duplicate -> EEXIST; setting a link down flushes its IPv4 routes.
// - DCB: per-link optional DcbState; none -> DcbState{supported=false}.
// - RDMA: devices with a namespace and one port; mode shared (default) / exclusive.
//   setRdmaSupported(false) makes every RDMA call fail with 103/EPROTONOSUPPORT (like this
//   host). Moving in shared mode -> EOPNOTSUPP; a device not in the caller's namespace -> ENODEV
//   (error 100). rdmaLinks() lists the devices the caller's namespace sees (exclusive: its own;
//   shared: all), with the port's netdev only when that netdev is in the caller's namespace.
//
// Fault injection: failCall(op, errno, nth) makes the nth call of `op` counted from now fail
// with that errno (before any state change), in whatever namespace it is made. failMutation(nth,
// errno) does the same for the nth state-changing call of any kind: loop nth = 1..mutations()
// of a successful run to prove rollback at every step. interruptDumps(n): the next n dump
// attempts report NLM_F_DUMP_INTR; links()/addresses()/routes() retry up to 4 times like
// LibnlNetlink, then fail with 11.
//
// Thread-safe (one mutex); FakeNetnsRunner does not hold it while running the callback.

#include <sys/types.h>

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/net/dcb.h"
#include "common/net/netlink.h"
#include "common/net/netns.h"

namespace rdmanet {

enum class FakeOp {
  kLinkByName,
  kLinkByIndex,
  kLinks,
  kSetUp,
  kRename,
  kSetMtu,
  kSetMac,
  kMoveToNetns,
  kAddMacvlan,
  kAddVlan,
  kDeleteLink,
  kVfs,
  kSetVfMac,
  kSetVfVlan,
  kSetVfSpoofchk,
  kSetVfTrust,
  kSetVfLinkState,
  kSetVfRate,
  kAddresses,
  kAddAddress,
  kDeleteAddress,
  kRoutes,
  kAddRoute,
  kDeleteRoute,
  kDcb,
  kRdmaNetnsMode,
  kMoveRdmaToNetns,
  kRdmaLinks,
  kSetEgressRate,
  kEgressRate,
  kRunInNetns,  // FakeNetnsRunner::run entering the namespace (fails with 102)
  kOpenNetns,   // FakeNetnsRunner::open (fails with 102)
};
const char* fakeOpName(FakeOp op);
bool isMutation(FakeOp op);  // state-changing: set*, move*, add*, delete*

enum class VfKnob { kMac, kVlan, kSpoofchk, kTrust, kLinkState, kRate };

struct FakeLink {
  LinkInfo info;          // info.operstate is derived: down / up / lowerlayerdown
  bool physical = false;  // survives netns deletion (returns to host); cannot be deleted
  uint32_t min_mtu = 68;
  uint32_t max_mtu = 9216;
  std::vector<IpPrefix> addresses;
  std::vector<VfInfo> vfs;  // PFs only; info.num_vfs == vfs.size()
  std::set<VfKnob> unsupported_vf_knobs;
  std::optional<DcbState> dcb;  // nullopt: no DCB support in the driver
  std::string rdma_device;      // the RDMA device whose port 1 this netdev is ("" for none)
  // Creation parameters of virtual links, for assertions.
  std::optional<MacvlanMode> macvlan_mode;
  uint16_t vlan_id = 0;
  uint16_t vlan_proto = 0;
  std::vector<std::pair<uint32_t, uint32_t>> egress_qos;
  // The rate of the root TBF qdisc (setEgressRate), Mbit/s; none: the default root qdisc.
  std::optional<uint64_t> egress_rate_mbps;
};

struct FakeLinkSpec {
  std::string name;
  std::string kind;               // "" = physical device
  std::optional<MacAddress> mac;  // generated (02:fa:...) when absent
  uint32_t mtu = 1500;
  bool up = false;
  bool carrier = true;
  int parent_ifindex = 0;
  std::string parent_dev;  // the PCI address of a physical device ("" for a virtual one)
  // A physical device's permanent address (IFLA_PERM_ADDRESS): its first MAC unless given
  // (zero for a VF whose driver sets none). Virtual links have none, as in the kernel.
  std::optional<MacAddress> perm_mac;
};

class FakeKernel {
 public:
  static constexpr const char* kHost = "host";
  FakeKernel();
  ~FakeKernel();
  FakeKernel(const FakeKernel&) = delete;
  FakeKernel& operator=(const FakeKernel&) = delete;

  // Namespaces.
  void addNetns(const std::string& ns);  // no-op when it exists
  void deleteNetns(const std::string& ns);
  bool hasNetns(const std::string& ns) const;
  NetnsHandle netnsHandle(const std::string& ns) const;  // invalid handle if no such ns
  std::optional<std::string> netnsOfFd(int fd) const;

  // Building the world. Returns the new ifindex (aborts on a duplicate name or unknown ns: that
  // is a broken fixture). Note: GCC 12 with -Wextra rejects partial designated initializers,
  // so fill a FakeLinkSpec field by field, or use the (ns, name, kind) overload: a physical
  // link (kind "") or a virtual one, MTU 1500, down, carrier on, generated MAC.
  int addLink(const std::string& ns, const FakeLinkSpec& spec);
  int addLink(const std::string& ns, const std::string& name, const std::string& kind = "");
  // A physical, up PF with `num_vfs` VFs (spoofchk on, everything else default) and MTU `mtu`.
  // VF netdevs are separate: addLink(ns, "ens1f0v0") for each one the test needs.
  int addPf(const std::string& ns, const std::string& name, int num_vfs, uint32_t mtu = 1500);
  void unsupportVfKnob(const std::string& ns, const std::string& pf, VfKnob knob);
  void setDcb(const std::string& ns, const std::string& ifname, std::optional<DcbState> dcb);
  void setCarrier(const std::string& ns, const std::string& ifname, bool carrier);
  void setParentDev(const std::string& ns, const std::string& ifname, const std::string& dev);
  void setVlanSupported(bool on);
  // Default false (EBUSY), like Debian 12's kernel 6.1; kernels >= 6.x let a running link be
  // renamed, so code must not rely on either.
  void setRenameWhileUpAllowed(bool on);

  // Inspecting it.
  std::optional<FakeLink> link(const std::string& ns, const std::string& name) const;
  std::optional<FakeLink> linkByIndex(const std::string& ns, int ifindex) const;
  std::vector<FakeLink> linksIn(const std::string& ns) const;  // sorted by ifindex, lo included
  std::vector<Route> routesIn(const std::string& ns) const;
  std::optional<std::string> netnsOfLink(const std::string& name) const;  // first match

  // RDMA devices. `netdev` (a link in `ns`) becomes the netdev of the device's port 1; the
  // association follows the link across namespaces and renames, as in the kernel.
  void addRdmaDevice(const std::string& name, const std::string& ns = kHost,
                     const std::string& netdev = "");
  std::optional<std::string> rdmaNetnsOf(const std::string& name) const;
  void setRdmaNetnsMode(RdmaNetnsMode mode);
  void setRdmaSupported(bool on);

  // Change notification (used by FakeLinkMonitor): every registered eventfd is written after
  // each state change.
  void subscribe(int eventfd);
  void unsubscribe(int eventfd);

  // Faults and counters.
  void failCall(FakeOp op, int err, int nth = 1);
  void failMutation(int nth, int err);
  void interruptDumps(int n);
  void clearFaults();
  int calls(FakeOp op) const;
  int mutations() const;                     // successful + failed state-changing calls so far
  std::vector<std::string> callLog() const;  // "setUp(host, 5)" ..., in order

 private:
  friend class FakeNetlink;
  friend class FakeNetnsRunner;
  struct Ns;
  struct Fault {
    std::optional<FakeOp> op;  // nullopt: any mutation
    int remaining;
    int err;
  };

  // Counts the call and returns a nonzero errno when a fault fires. Caller holds mu_.
  int enter(FakeOp op, const std::string& ns, const std::string& args);
  Ns* nsLocked(const std::string& ns);
  const Ns* nsLocked(const std::string& ns) const;
  FakeLink* findLocked(Ns& ns, int ifindex);
  FakeLink* findLocked(Ns& ns, const std::string& name);
  int insertLocked(Ns& ns, FakeLink link, int wanted_ifindex);
  void removeLinkLocked(Ns& ns, int ifindex);
  MacAddress nextMac();
  void notifyLocked();

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Ns>> ns_;
  std::map<std::string, std::pair<std::string, int>> rdma_;  // name -> (ns, nldev index)
  RdmaNetnsMode rdma_mode_ = RdmaNetnsMode::kShared;
  bool rdma_supported_ = true;
  bool vlan_supported_ = true;
  bool rename_up_ok_ = false;
  std::vector<Fault> faults_;
  std::map<FakeOp, int> calls_;
  int mutations_ = 0;
  int dump_interrupts_ = 0;
  int mac_counter_ = 0;
  std::vector<std::string> log_;
  std::vector<int> subscribers_;
};

}  // namespace rdmanet
