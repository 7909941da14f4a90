// Unit tests of the fake kernel: it must answer like the kernel, or tests built on it lie.
#include "tests/fakes/fake_netlink.h"

#include <gtest/gtest.h>
#include <linux/if_ether.h>

#include <cerrno>

namespace rdmanet {
namespace {

IpPrefix pfx(const char* s) { return IpPrefix::parse(s).value(); }
IpAddress ip(const char* s) { return IpAddress::parse(s).value(); }

class FakeNetlinkTest : public ::testing::Test {
 protected:
  FakeKernel kernel_;
  FakeNetnsRunner runner_{kernel_};
  FakeNetlink host_{kernel_};
};

TEST_F(FakeNetlinkTest, NewNamespaceHasOnlyLoopback) {
  runner_.addNetns("/run/netns/pod", "pod");
  FakeNetlink pod(kernel_, "pod");
  auto links = pod.links();
  ASSERT_TRUE(links.ok());
  ASSERT_EQ(links->size(), 1u);
  EXPECT_EQ((*links)[0].name, "lo");
  EXPECT_EQ((*links)[0].ifindex, 1);
}

TEST_F(FakeNetlinkTest, MissingLinkIsDeviceNotFoundWithEnodev) {
  auto r = host_.linkByName("nope0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_EQ(r.error().sys_errno, ENODEV);
  EXPECT_EQ(host_.setUp(4242, true).error().code, ErrorCode::kDeviceNotFound);
}

// As the real kernel (tests/common/net/libnl_netlink_test.cc): a physical link keeps its
// permanent address through a MAC change and a move; a virtual one has none.
TEST_F(FakeNetlinkTest, PhysicalLinksHaveAPermanentMacAndVirtualOnesNone) {
  const int nic = kernel_.addLink(FakeKernel::kHost, "eth1");
  const int veth = kernel_.addLink(FakeKernel::kHost, "v0", "veth");
  const MacAddress first = host_.linkByIndex(nic)->mac;
  EXPECT_FALSE(first.isZero());
  ASSERT_TRUE(host_.setMac(nic, MacAddress::parse("02:00:00:00:00:07").value()).ok());
  runner_.addNetns("/run/netns/pod", "pod");
  ASSERT_TRUE(host_.moveToNetns(nic, kernel_.netnsHandle("pod").fd()).ok());
  FakeNetlink pod(kernel_, "pod");
  EXPECT_EQ(pod.linkByName("eth1")->perm_mac, first);
  EXPECT_TRUE(host_.linkByIndex(veth)->perm_mac.isZero());
}

TEST_F(FakeNetlinkTest, RenameRequiresLinkDown) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  ASSERT_TRUE(host_.setUp(idx, true).ok());
  auto busy = host_.rename(idx, "net1");
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().sys_errno, EBUSY);
  EXPECT_EQ(busy.error().code, ErrorCode::kNetlinkFailure);
  ASSERT_TRUE(host_.setUp(idx, false).ok());
  ASSERT_TRUE(host_.rename(idx, "net1").ok());
  EXPECT_EQ(host_.linkByIndex(idx)->name, "net1");
}

TEST_F(FakeNetlinkTest, RenameToTakenOrInvalidNameFails) {
  const int a = kernel_.addLink(FakeKernel::kHost, "eth1");
  kernel_.addLink(FakeKernel::kHost, "eth2");
  EXPECT_EQ(host_.rename(a, "eth2").error().sys_errno, EEXIST);
  EXPECT_EQ(host_.rename(a, "a/b").error().sys_errno, EINVAL);
  EXPECT_EQ(host_.rename(a, "sixteen-chars-xx").error().sys_errno, EINVAL);
}

TEST_F(FakeNetlinkTest, MtuOutOfRangeIsEinval) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  EXPECT_EQ(host_.setMtu(idx, 20).error().sys_errno, EINVAL);
  EXPECT_EQ(host_.setMtu(idx, 100000).error().sys_errno, EINVAL);
  ASSERT_TRUE(host_.setMtu(idx, 9000).ok());
  EXPECT_EQ(kernel_.link(FakeKernel::kHost, "eth1")->info.mtu, 9000u);
}

// As LibnlNetlink on the kernel (tests/common/net/libnl_qdisc_test.cc): a root TBF per link,
// replaced by the next, none until set; a zero rate or a missing link is refused.
TEST_F(FakeNetlinkTest, TheEgressRateIsTheLinksRootTbfUntilReplaced) {
  const int a = kernel_.addLink(FakeKernel::kHost, "va", "veth");
  const int b = kernel_.addLink(FakeKernel::kHost, "vb", "veth");
  EXPECT_EQ(*host_.egressRate(a), std::nullopt);
  ASSERT_TRUE(host_.setEgressRate(a, 500).ok());
  ASSERT_TRUE(host_.setEgressRate(a, 50'000).ok());
  EXPECT_EQ(*host_.egressRate(a), std::optional<uint64_t>(50'000));
  EXPECT_EQ(*host_.egressRate(b), std::nullopt);
  EXPECT_EQ(host_.setEgressRate(a, 0).error().sys_errno, EINVAL);
  EXPECT_EQ(host_.setEgressRate(4242, 1).error().code, ErrorCode::kDeviceNotFound);
  EXPECT_EQ(host_.egressRate(4242).error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(FakeNetlinkTest, MulticastMacIsRejected) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  EXPECT_EQ(host_.setMac(idx, MacAddress::parse("01:00:5e:00:00:01").value()).error().sys_errno,
            EADDRNOTAVAIL);
  const auto mac = MacAddress::parse("02:00:00:00:00:42").value();
  ASSERT_TRUE(host_.setMac(idx, mac).ok());
  EXPECT_EQ(host_.linkByIndex(idx)->mac, mac);
}

TEST_F(FakeNetlinkTest, MoveToNetnsRemovesFromSourceAndArrivesDownWithoutAddresses) {
  runner_.addNetns("/run/netns/pod", "pod");
  const int idx = kernel_.addLink(FakeKernel::kHost, "vf0");
  ASSERT_TRUE(host_.setUp(idx, true).ok());
  ASSERT_TRUE(host_.addAddress(idx, pfx("10.0.0.2/24")).ok());
  auto handle = runner_.open("/run/netns/pod");
  ASSERT_TRUE(handle.ok());
  ASSERT_TRUE(host_.moveToNetns(idx, handle->fd()).ok());
  EXPECT_EQ(host_.linkByIndex(idx).error().code, ErrorCode::kDeviceNotFound);
  auto moved = kernel_.link("pod", "vf0");
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->info.ifindex, idx);  // kept: free in the target
  EXPECT_FALSE(moved->info.admin_up);
  EXPECT_TRUE(moved->addresses.empty());
}

TEST_F(FakeNetlinkTest, MoveKeepsIfindexOnlyWhenFree) {
  runner_.addNetns("/run/netns/pod", "pod");
  const int first = kernel_.addLink("pod", "x0");  // ifindex 2 in pod
  const int idx = kernel_.addLink(FakeKernel::kHost, "vf0");
  ASSERT_EQ(first, idx);  // both namespaces hand out 2 first
  auto handle = kernel_.netnsHandle("pod");
  ASSERT_TRUE(host_.moveToNetns(idx, handle.fd()).ok());
  EXPECT_NE(kernel_.link("pod", "vf0")->info.ifindex, first);
}

TEST_F(FakeNetlinkTest, MoveWithNameClashIsEexistAndLeavesLinkInPlace) {
  runner_.addNetns("/run/netns/pod", "pod");
  kernel_.addLink("pod", "vf0");
  const int idx = kernel_.addLink(FakeKernel::kHost, "vf0");
  auto handle = kernel_.netnsHandle("pod");
  EXPECT_EQ(host_.moveToNetns(idx, handle.fd()).error().sys_errno, EEXIST);
  EXPECT_TRUE(host_.linkByIndex(idx).ok());
}

TEST_F(FakeNetlinkTest, MoveToFdThatIsNotANamespaceFails) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "vf0");
  EXPECT_EQ(host_.moveToNetns(idx, 0).error().sys_errno, EINVAL);  // stdin: not a fake netns
  EXPECT_EQ(host_.moveToNetns(idx, 9999).error().sys_errno, EBADF);
}

TEST_F(FakeNetlinkTest, DeletingNamespaceReturnsPhysicalLinksAndDestroysVirtualOnes) {
  runner_.addNetns("/run/netns/pod", "pod");
  const int master = kernel_.addLink(FakeKernel::kHost, "ens1");
  const int vf = kernel_.addLink(FakeKernel::kHost, "vf0");
  auto h = kernel_.netnsHandle("pod");
  MacvlanSpec spec;
  spec.name = "mv0";
  spec.master_ifindex = master;
  spec.netns_fd = h.fd();
  ASSERT_EQ(host_.addMacvlan(spec).value(), 0);  // created in "pod"
  ASSERT_TRUE(host_.moveToNetns(vf, h.fd()).ok());
  kernel_.addRdmaDevice("mlx5_3", "pod");
  kernel_.deleteNetns("pod");
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "vf0").has_value());
  EXPECT_FALSE(kernel_.netnsOfLink("mv0").has_value());
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_3"), FakeKernel::kHost);
}

TEST_F(FakeNetlinkTest, PhysicalLinkReturningOnNameClashIsRenamedDevN) {
  runner_.addNetns("/run/netns/pod", "pod");
  const int vf = kernel_.addLink(FakeKernel::kHost, "vf0");
  auto h = kernel_.netnsHandle("pod");
  ASSERT_TRUE(host_.moveToNetns(vf, h.fd()).ok());
  kernel_.addLink(FakeKernel::kHost, "vf0");  // someone took the name meanwhile
  kernel_.deleteNetns("pod");
  auto links = kernel_.linksIn(FakeKernel::kHost);
  int dev_named = 0;
  for (const auto& l : links) dev_named += l.info.name.rfind("dev", 0) == 0;
  EXPECT_EQ(dev_named, 1);
}

TEST_F(FakeNetlinkTest, MacvlanPassthruNeedsMasterToItself) {
  const int master = kernel_.addLink(FakeKernel::kHost, "ens1");
  MacvlanSpec a;
  a.name = "mv0";
  a.master_ifindex = master;
  a.mode = MacvlanMode::kPassthru;
  auto first = host_.addMacvlan(a);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(host_.linkByIndex(*first)->mac, host_.linkByIndex(master)->mac);
  MacvlanSpec b = a;
  b.name = "mv1";
  b.mode = MacvlanMode::kBridge;
  EXPECT_EQ(host_.addMacvlan(b).error().sys_errno, EINVAL);
}

TEST_F(FakeNetlinkTest, MacvlanErrors) {
  const int master = kernel_.addLink(FakeKernel::kHost, "ens1");
  MacvlanSpec s;
  s.name = "mv0";
  s.master_ifindex = 777;
  EXPECT_EQ(host_.addMacvlan(s).error().code, ErrorCode::kDeviceNotFound);
  s.master_ifindex = master;
  s.mtu = 9000;  // above the master's 1500
  EXPECT_EQ(host_.addMacvlan(s).error().sys_errno, EINVAL);
  s.mtu = 0;
  ASSERT_TRUE(host_.addMacvlan(s).ok());
  EXPECT_EQ(host_.addMacvlan(s).error().sys_errno, EEXIST);
}

TEST_F(FakeNetlinkTest, DeletingMasterDeletesItsMacvlansButPhysicalLinksCannotBeDeleted) {
  const int master = kernel_.addLink(FakeKernel::kHost, "br-like", "veth");
  MacvlanSpec s;
  s.name = "mv0";
  s.master_ifindex = master;
  ASSERT_TRUE(host_.addMacvlan(s).ok());
  ASSERT_TRUE(host_.deleteLink(master).ok());
  EXPECT_FALSE(kernel_.link(FakeKernel::kHost, "mv0").has_value());
  const int phys = kernel_.addLink(FakeKernel::kHost, "ens2");
  EXPECT_EQ(host_.deleteLink(phys).error().sys_errno, EOPNOTSUPP);
}

TEST_F(FakeNetlinkTest, VlanUnsupportedKernelAnswersEopnotsupp) {
  const int link = kernel_.addLink(FakeKernel::kHost, "ens1");
  VlanSpec v;
  v.name = "ens1.10";
  v.link_ifindex = link;
  v.vlan_id = 10;
  v.egress_qos = {{0, 3}};
  kernel_.setVlanSupported(false);
  EXPECT_EQ(host_.addVlan(v).error().sys_errno, EOPNOTSUPP);
  kernel_.setVlanSupported(true);
  auto idx = host_.addVlan(v);
  ASSERT_TRUE(idx.ok());
  auto l = kernel_.link(FakeKernel::kHost, "ens1.10");
  EXPECT_EQ(l->vlan_id, 10);
  EXPECT_EQ(l->egress_qos, v.egress_qos);
  v.name = "other";
  EXPECT_EQ(host_.addVlan(v).error().sys_errno, EEXIST);  // same id on the same link
  v.vlan_id = 5000;
  EXPECT_EQ(host_.addVlan(v).error().sys_errno, ERANGE);
}

TEST_F(FakeNetlinkTest, VfKnobsAreStoredAndReportedByPf) {
  const int pf = kernel_.addPf(FakeKernel::kHost, "ens1f0", 4);
  const auto mac = MacAddress::parse("02:11:22:33:44:55").value();
  ASSERT_TRUE(host_.setVfMac(pf, 2, mac).ok());
  ASSERT_TRUE(host_.setVfVlan(pf, 2, 100, 3, ETH_P_8021AD).ok());
  ASSERT_TRUE(host_.setVfSpoofchk(pf, 2, false).ok());
  ASSERT_TRUE(host_.setVfTrust(pf, 2, true).ok());
  ASSERT_TRUE(host_.setVfLinkState(pf, 2, VfLinkState::kEnable).ok());
  ASSERT_TRUE(host_.setVfRate(pf, 2, 100, 1000).ok());
  auto vfs = host_.vfs(pf);
  ASSERT_TRUE(vfs.ok());
  ASSERT_EQ(vfs->size(), 4u);
  VfInfo want;
  want.index = 2;
  want.mac = mac;
  want.vlan = 100;
  want.qos = 3;
  want.vlan_proto = ETH_P_8021AD;
  want.spoofchk = false;
  want.trust = true;
  want.link_state = VfLinkState::kEnable;
  want.min_tx_rate = 100;
  want.max_tx_rate = 1000;
  EXPECT_EQ((*vfs)[2], want);
  EXPECT_EQ(host_.linkByIndex(pf)->num_vfs, 4);
}

TEST_F(FakeNetlinkTest, VfErrorsMatchTheKernel) {
  const int pf = kernel_.addPf(FakeKernel::kHost, "ens1f0", 2);
  EXPECT_EQ(host_.setVfTrust(pf, 2, true).error().sys_errno, EINVAL);  // VF index out of range
  EXPECT_EQ(host_.setVfVlan(pf, 0, 4096, 0, ETH_P_8021Q).error().sys_errno, EINVAL);
  EXPECT_EQ(host_.setVfVlan(pf, 0, 1, 0, 0x1234).error().sys_errno, EPROTONOSUPPORT);
  EXPECT_EQ(host_.setVfRate(pf, 0, 500, 100).error().sys_errno, EINVAL);
  kernel_.unsupportVfKnob(FakeKernel::kHost, "ens1f0", VfKnob::kTrust);
  auto r = host_.setVfTrust(pf, 0, true);
  EXPECT_EQ(r.error().sys_errno, EOPNOTSUPP);
  EXPECT_EQ(r.error().code, ErrorCode::kNetlinkFailure);
  const int plain = kernel_.addLink(FakeKernel::kHost, "eth9");
  EXPECT_TRUE(host_.vfs(plain)->empty());
}

TEST_F(FakeNetlinkTest, AddressesAddDuplicateAndIdempotentDelete) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  ASSERT_TRUE(host_.addAddress(idx, pfx("10.1.0.2/24")).ok());
  ASSERT_TRUE(host_.addAddress(idx, pfx("fd00::2/64")).ok());
  EXPECT_EQ(host_.addAddress(idx, pfx("10.1.0.2/24")).error().sys_errno, EEXIST);
  EXPECT_EQ(host_.addresses(idx)->size(), 2u);
  ASSERT_TRUE(host_.deleteAddress(idx, pfx("10.1.0.2/24")).ok());
  ASSERT_TRUE(host_.deleteAddress(idx, pfx("10.1.0.2/24")).ok());
  ASSERT_EQ(host_.addresses(idx)->size(), 1u);
  EXPECT_EQ((*host_.addresses(idx))[0], pfx("fd00::2/64"));
}

TEST_F(FakeNetlinkTest, RouteGatewayMustBeOnLinkAndIpv4LinkUp) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  Route r;
  r.dst = pfx("0.0.0.0/0");
  r.gateway = ip("10.1.0.1");
  r.ifindex = idx;
  EXPECT_EQ(host_.addRoute(r).error().sys_errno, ENETDOWN);
  ASSERT_TRUE(host_.setUp(idx, true).ok());
  EXPECT_EQ(host_.addRoute(r).error().sys_errno, ENETUNREACH);
  ASSERT_TRUE(host_.addAddress(idx, pfx("10.1.0.2/24")).ok());
  ASSERT_TRUE(host_.addRoute(r).ok());
  EXPECT_EQ(host_.addRoute(r).error().sys_errno, EEXIST);
  ASSERT_EQ(host_.routes(idx)->size(), 1u);
  ASSERT_TRUE(host_.deleteRoute(r).ok());
  ASSERT_TRUE(host_.deleteRoute(r).ok());  // missing route: success
  EXPECT_TRUE(host_.routes(idx)->empty());
}

TEST_F(FakeNetlinkTest, SettingLinkDownFlushesItsIpv4Routes) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  ASSERT_TRUE(host_.setUp(idx, true).ok());
  ASSERT_TRUE(host_.addAddress(idx, pfx("10.1.0.2/24")).ok());
  Route r;
  r.dst = pfx("10.9.0.0/16");
  r.gateway = ip("10.1.0.1");
  r.ifindex = idx;
  ASSERT_TRUE(host_.addRoute(r).ok());
  ASSERT_TRUE(host_.setUp(idx, false).ok());
  EXPECT_TRUE(host_.routes(idx)->empty());
}

TEST_F(FakeNetlinkTest, DcbDefaultsToUnsupportedAndReportsWhatWasSet) {
  kernel_.addLink(FakeKernel::kHost, "ens1");
  EXPECT_FALSE(host_.dcb("ens1")->supported);
  DcbState s;
  s.supported = true;
  s.pfc_enabled = 1 << 3;
  s.apps.push_back(DcbApp{.selector = 5, .priority = 3, .protocol = 26});
  kernel_.setDcb(FakeKernel::kHost, "ens1", s);
  auto got = host_.dcb("ens1");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->pfcOn(3));
  EXPECT_EQ(got->trust(), TrustMode::kDscp);
  EXPECT_EQ(host_.dcb("nope").error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(FakeNetlinkTest, RdmaMoveNeedsExclusiveModeAndSupport) {
  runner_.addNetns("/run/netns/pod", "pod");
  kernel_.addRdmaDevice("mlx5_2");
  auto h = kernel_.netnsHandle("pod");
  auto shared = host_.moveRdmaToNetns("mlx5_2", h.fd());
  EXPECT_EQ(shared.error().code, ErrorCode::kRdmaFailure);
  EXPECT_EQ(shared.error().sys_errno, EOPNOTSUPP);
  kernel_.setRdmaNetnsMode(RdmaNetnsMode::kExclusive);
  EXPECT_EQ(host_.rdmaNetnsMode().value(), RdmaNetnsMode::kExclusive);
  ASSERT_TRUE(host_.moveRdmaToNetns("mlx5_2", h.fd()).ok());
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_2"), "pod");
  EXPECT_EQ(host_.moveRdmaToNetns("mlx5_2", h.fd()).error().code, ErrorCode::kDeviceNotFound);
  kernel_.setRdmaSupported(false);
  auto r = host_.rdmaNetnsMode();
  EXPECT_EQ(r.error().code, ErrorCode::kRdmaFailure);
  EXPECT_EQ(r.error().sys_errno, EPROTONOSUPPORT);
}

TEST_F(FakeNetlinkTest, RdmaLinksShowWhatTheNamespaceSeesAndFollowTheNetdev) {
  runner_.addNetns("/run/netns/pod", "pod");
  const int vf = kernel_.addLink(FakeKernel::kHost, "ens1f0v0");
  kernel_.addRdmaDevice("mlx5_0");
  kernel_.addRdmaDevice("mlx5_1", FakeKernel::kHost, "ens1f0v0");
  auto all = host_.rdmaLinks();
  ASSERT_TRUE(all.ok()) << all.error().msg;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1], (RdmaLink{"mlx5_1", 1, vf, "ens1f0v0"}));
  EXPECT_EQ((*all)[0].netdev_ifindex, 0);

  // The netdev moves into the pod and is renamed there: in shared mode the pod sees both
  // devices, and the port's netdev only from the pod.
  auto pod_fd = kernel_.netnsHandle("pod");
  ASSERT_TRUE(host_.moveToNetns(vf, pod_fd.fd()).ok());
  FakeNetlink pod(kernel_, "pod");
  const int in_pod = pod.linkByName("ens1f0v0")->ifindex;
  ASSERT_TRUE(pod.rename(in_pod, "net1").ok());
  EXPECT_EQ(host_.rdmaLinks()->at(1).netdev, "");
  auto seen = pod.rdmaLinks();
  ASSERT_EQ(seen->size(), 2u);
  EXPECT_EQ((*seen)[1], (RdmaLink{"mlx5_1", 1, in_pod, "net1"}));

  // Exclusive mode: each namespace sees only its own devices.
  kernel_.setRdmaNetnsMode(RdmaNetnsMode::kExclusive);
  ASSERT_TRUE(host_.moveRdmaToNetns("mlx5_1", pod_fd.fd()).ok());
  ASSERT_EQ(pod.rdmaLinks()->size(), 1u);
  EXPECT_EQ(pod.rdmaLinks()->at(0).device, "mlx5_1");
  ASSERT_EQ(host_.rdmaLinks()->size(), 1u);
  EXPECT_EQ(host_.rdmaLinks()->at(0).device, "mlx5_0");

  kernel_.setRdmaSupported(false);
  auto r = pod.rdmaLinks();
  EXPECT_EQ(r.error().code, ErrorCode::kRdmaFailure);
  EXPECT_EQ(r.error().sys_errno, EPROTONOSUPPORT);
}

TEST_F(FakeNetlinkTest, FailCallFailsOnlyTheNthCallOfThatOp) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  kernel_.failCall(FakeOp::kSetMtu, EBUSY, 2);
  EXPECT_TRUE(host_.setMtu(idx, 1400).ok());
  auto second = host_.setMtu(idx, 1300);
  EXPECT_EQ(second.error().sys_errno, EBUSY);
  EXPECT_EQ(kernel_.link(FakeKernel::kHost, "eth1")->info.mtu, 1400u);  // no state change
  EXPECT_TRUE(host_.setMtu(idx, 1200).ok());
  EXPECT_EQ(kernel_.calls(FakeOp::kSetMtu), 3);
}

TEST_F(FakeNetlinkTest, FailMutationSkipsReadsAndCountsEveryStateChange) {
  const int idx = kernel_.addLink(FakeKernel::kHost, "eth1");
  kernel_.failMutation(2, EPERM);
  EXPECT_TRUE(host_.linkByIndex(idx).ok());  // reads do not count
  EXPECT_TRUE(host_.setUp(idx, true).ok());
  EXPECT_EQ(host_.addAddress(idx, pfx("10.0.0.1/24")).error().sys_errno, EPERM);
  EXPECT_EQ(kernel_.mutations(), 2);
  EXPECT_EQ(kernel_.callLog().back(), "addAddress(host, " + std::to_string(idx) + ", 10.0.0.1/24)");
}

TEST_F(FakeNetlinkTest, DumpsRetryInterruptionsThenGiveUpWithTryAgain) {
  kernel_.interruptDumps(3);
  EXPECT_TRUE(host_.links().ok());
  kernel_.interruptDumps(4);
  auto r = host_.links();
  EXPECT_EQ(r.error().code, ErrorCode::kTryAgainLater);
}

TEST_F(FakeNetlinkTest, RunnerBindsNetlinkToTheMappedNamespace) {
  runner_.addNetns("/run/netns/pod", "pod");
  kernel_.addLink("pod", "inside0");
  std::string seen;
  ASSERT_TRUE(runner_
                  .run("/run/netns/pod",
                       [&](Netlink& nl) -> Status {
                         RDMANET_ASSIGN_OR_RETURN(LinkInfo l, nl.linkByName("inside0"));
                         seen = l.name;
                         return okStatus();
                       })
                  .ok());
  EXPECT_EQ(seen, "inside0");
  EXPECT_EQ(runner_.runs(), 1);
}

TEST_F(FakeNetlinkTest, RunnerUnknownOrDeletedNamespaceIsError3) {
  auto unknown = runner_.run("/run/netns/ghost", [](Netlink&) { return okStatus(); });
  EXPECT_EQ(unknown.error().code, ErrorCode::kContainerUnknown);
  runner_.addNetns("/run/netns/pod", "pod");
  kernel_.deleteNetns("pod");
  EXPECT_EQ(runner_.open("/run/netns/pod").error().code, ErrorCode::kContainerUnknown);
  EXPECT_EQ(runner_.run("relative", [](Netlink&) { return okStatus(); }).error().code,
            ErrorCode::kInvalidEnv);
}

TEST_F(FakeNetlinkTest, RunnerFaultIsNetnsFailureAndFnDoesNotRun) {
  runner_.addNetns("/run/netns/pod", "pod");
  kernel_.failCall(FakeOp::kRunInNetns, EPERM);
  bool ran = false;
  auto r = runner_.run("/run/netns/pod", [&](Netlink&) {
    ran = true;
    return okStatus();
  });
  EXPECT_EQ(r.error().code, ErrorCode::kNetnsFailure);
  EXPECT_FALSE(ran);
}

TEST_F(FakeNetlinkTest, HostPathsResolveToHostNamespace) {
  auto h = runner_.open("/proc/self/ns/net");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(kernel_.netnsOfFd(h->fd()), FakeKernel::kHost);
}

}  // namespace
}  // namespace rdmanet
