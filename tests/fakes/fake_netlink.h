#pragma once
// Test doubles for the kernel seams of common/net, backed by one FakeKernel (fake_kernel.h,
// which documents the modelled behaviour and errnos in detail).
//
//   FakeKernel kernel;                                  // "host" netns with "lo"
//   int pf = kernel.addPf(FakeKernel::kHost, "ens1f0", 4);
//   kernel.addLink(FakeKernel::kHost, "ens1f0v0");      // a VF netdev (physical)
//   FakeNetnsRunner runner(kernel);
//   runner.addNetns("/var/run/netns/pod1", "pod1");     // creates ns "pod1", maps the path
//   FakeNetlink host(kernel);                            // a Netlink bound to "host"
//   auto pod = runner.open("/var/run/netns/pod1");       // a real fd naming fake ns "pod1"
//   host.moveToNetns(vf_ifindex, pod->fd());
//   kernel.failCall(FakeOp::kAddAddress, EEXIST);        // the next addAddress fails
//   runner.run("/var/run/netns/pod1", [](Netlink& nl) { ... });  // nl is bound to "pod1"
//
// Errors follow netlink.h: ENODEV -> 100, other errnos -> 101 (RDMA: 103), dumps interrupted
// 4 times -> 11; FakeNetnsRunner: unknown path or deleted ns -> 3 (ENOENT), injected faults
// -> 102.

#include <map>
#include <string>

#include "common/net/netlink.h"
#include "common/net/netns.h"
#include "tests/fakes/fake_kernel.h"

namespace rdmanet {

// A Netlink bound to one namespace of a FakeKernel (like a socket opened there).
class FakeNetlink : public Netlink {
 public:
  explicit FakeNetlink(FakeKernel& kernel, std::string ns = FakeKernel::kHost)
      : kernel_(kernel), ns_(std::move(ns)) {}
  const std::string& netns() const { return ns_; }

  Result<LinkInfo> linkByName(const std::string& name) override;
  Result<LinkInfo> linkByIndex(int ifindex) override;
  Result<std::vector<LinkInfo>> links() override;
  Status setUp(int ifindex, bool up) override;
  Status rename(int ifindex, const std::string& name) override;
  Status setMtu(int ifindex, uint32_t mtu) override;
  Status setMac(int ifindex, const MacAddress& mac) override;
  Status moveToNetns(int ifindex, int netns_fd) override;
  Result<int> addMacvlan(const MacvlanSpec& spec) override;
  Result<int> addVlan(const VlanSpec& spec) override;
  Status deleteLink(int ifindex) override;

  Result<std::vector<VfInfo>> vfs(int pf_ifindex) override;
  Status setVfMac(int pf_ifindex, int vf, const MacAddress& mac) override;
  Status setVfVlan(int pf_ifindex, int vf, uint16_t vlan, uint8_t qos, uint16_t proto) override;
  Status setVfSpoofchk(int pf_ifindex, int vf, bool on) override;
  Status setVfTrust(int pf_ifindex, int vf, bool on) override;
  Status setVfLinkState(int pf_ifindex, int vf, VfLinkState state) override;
  Status setVfRate(int pf_ifindex, int vf, uint32_t min_mbps, uint32_t max_mbps) override;

  Result<std::vector<IpPrefix>> addresses(int ifindex) override;
  Status addAddress(int ifindex, const IpPrefix& prefix) override;
  Status deleteAddress(int ifindex, const IpPrefix& prefix) override;
  Result<std::vector<Route>> routes(int ifindex) override;
  Status addRoute(const Route& route) override;
  Status deleteRoute(const Route& route) override;

  Result<DcbState> dcb(const std::string& ifname) override;
  Result<RdmaNetnsMode> rdmaNetnsMode() override;
  Status moveRdmaToNetns(const std::string& rdma_dev, int netns_fd) override;
  Result<std::vector<RdmaLink>> rdmaLinks() override;
  Status setEgressRate(int ifindex, uint32_t mbps) override;
  Result<std::optional<uint64_t>> egressRate(int ifindex) override;

 private:
  // Runs `op` on this namespace's state under the kernel lock, after counting the call and
  // applying injected faults. `fn` returns 0 or a positive errno.
  Status mutate(FakeOp op, const std::string& args, const std::function<int()>& fn,
                ErrorCode code = ErrorCode::kNetlinkFailure);
  Result<int> createLink(FakeOp op, const std::string& args, FakeLink link, int netns_fd,
                         int pre_err = 0);
  Status setVf(FakeOp op, int pf, int vf, VfKnob knob, const std::function<int(VfInfo&)>& fn);
  template <typename T>
  Result<std::vector<T>> dumpOf(FakeOp op, int ifindex,
                                const std::function<std::vector<T>(FakeKernel::Ns&)>& fn);

  FakeKernel& kernel_;
  std::string ns_;
};

// A NetnsRunner over FakeKernel namespaces, addressed by path.
// "/proc/self/ns/net" and "/proc/thread-self/ns/net" map to "host" from the start.
class FakeNetnsRunner : public NetnsRunner {
 public:
  explicit FakeNetnsRunner(FakeKernel& kernel);
  // Maps `path` to namespace `ns` (creating it in the kernel if needed).
  void addNetns(const std::string& path, const std::string& ns);
  // Forgets the path only (the namespace stays): like a bind mount removed by the runtime.
  void removePath(const std::string& path);

  Status run(const std::string& netns_path, const Fn& fn) override;
  Result<NetnsHandle> open(const std::string& netns_path) override;
  int runs() const { return runs_; }  // successful entries so far

 private:
  Result<std::string> resolve(const std::string& path) const;
  FakeKernel& kernel_;
  std::map<std::string, std::string> paths_;
  int runs_ = 0;
};

}  // namespace rdmanet
