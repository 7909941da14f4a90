// LibnlNetlink against the real kernel: veth and macvlan links in throw-away namespaces.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/net/netns.h"
#include "tests/common/net/libnl_fixture.h"

namespace rdmanet::testing {
namespace {

using LibnlLinkTest = LibnlNetnsTest;

IpPrefix pfx(const char* s) { return IpPrefix::parse(s).value(); }
IpAddress addr(const char* s) { return IpAddress::parse(s).value(); }

TEST_F(LibnlLinkTest, LinkByNameReportsVethKindMtuAndMac) {
  auto l = nl_->linkByName("va");
  ASSERT_TRUE(l.ok()) << l.error().msg;
  EXPECT_EQ(l->kind, "veth");
  EXPECT_EQ(l->mtu, 1500u);
  EXPECT_FALSE(l->mac.isZero());
  EXPECT_EQ(l->parent_dev, "");  // a virtual link has no bus device
  EXPECT_FALSE(l->admin_up);
  auto same = nl_->linkByIndex(l->ifindex);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->name, "va");
}

// `ethtool -P` reads the permanent address through the ethtool ioctl, apart from rtnetlink.
std::string ethtoolPermMac(const std::string& ns, const std::string& ifname) {
  std::string out;
  const std::string in_ns = ns.empty() ? "" : "/usr/bin/ip netns exec " + ns + " ";
  if (run({"/bin/sh", "-c", in_ns + "/usr/sbin/ethtool -P " + ifname + " 1>&2"}, &out) != 0) {
    return "";  // gone meanwhile (another test's link), or no ethtool
  }
  if (out.find("not set") != std::string::npos) return "00:00:00:00:00:00";
  const auto colon = out.find(": ");
  return colon == std::string::npos ? "" : out.substr(colon + 2, 17);
}

// IFLA_PERM_ADDRESS as the kernel reports it: none on a veth; on the host's own links (a NIC
// with a burned-in address, where the machine has one) what ethtool reads.
TEST_F(LibnlLinkTest, PermanentMacIsWhatEthtoolReads) {
  auto va = nl_->linkByName("va");
  ASSERT_TRUE(va.ok()) << va.error().msg;
  EXPECT_TRUE(va->perm_mac.isZero()) << va->perm_mac.str();
  EXPECT_EQ(ethtoolPermMac(ns_->name(), "va"), "00:00:00:00:00:00");
  ASSERT_TRUE(nl_->setMac(va->ifindex, MacAddress::parse("02:00:00:00:00:42").value()).ok());
  EXPECT_TRUE(nl_->linkByName("va")->perm_mac.isZero());  // a MAC change makes none

  enter_.reset();  // the host's links, from the host's namespace
  auto host = LibnlNetlink::open();
  ASSERT_TRUE(host.ok()) << host.error().msg;
  auto links = (*host)->links();
  ASSERT_TRUE(links.ok()) << links.error().msg;
  int compared = 0;
  for (const LinkInfo& l : *links) {
    const std::string want = ethtoolPermMac("", l.name);
    if (want.empty()) continue;
    EXPECT_EQ(l.perm_mac.str(), want) << l.name;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST_F(LibnlLinkTest, MissingLinkIsDeviceNotFoundWithEnodev) {
  auto byName = nl_->linkByName("nope0");
  ASSERT_FALSE(byName.ok());
  EXPECT_EQ(byName.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_EQ(byName.error().sys_errno, ENODEV);
  auto byIndex = nl_->linkByIndex(99999);
  ASSERT_FALSE(byIndex.ok());
  EXPECT_EQ(byIndex.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_EQ(nl_->setUp(99999, true).error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(LibnlLinkTest, DumpListsLoopbackAndBothVethEnds) {
  auto links = nl_->links();
  ASSERT_TRUE(links.ok()) << links.error().msg;
  std::vector<std::string> names;
  for (const auto& l : *links) names.push_back(l.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"lo", "va", "vb"}));
}

TEST_F(LibnlLinkTest, SetUpAndDown) {
  const int va = index("va");
  const int vb = index("vb");
  ASSERT_TRUE(nl_->setUp(va, true).ok());
  auto l = nl_->linkByIndex(va);
  EXPECT_TRUE(l->admin_up);
  EXPECT_FALSE(l->carrier);  // peer still down
  ASSERT_TRUE(nl_->setUp(vb, true).ok());
  EXPECT_TRUE(nl_->linkByIndex(va)->carrier);
  ASSERT_TRUE(nl_->setUp(va, false).ok());
  EXPECT_FALSE(nl_->linkByIndex(va)->admin_up);
  EXPECT_EQ(nl_->linkByIndex(va)->operstate, "down");
}

TEST_F(LibnlLinkTest, RenameWhileDown) {
  const int va = index("va");
  ASSERT_TRUE(nl_->rename(va, "net1").ok());
  EXPECT_EQ(nl_->linkByIndex(va)->name, "net1");
  EXPECT_EQ(nl_->linkByName("va").error().code, ErrorCode::kDeviceNotFound);
}

// Kernels before 6.x refuse to rename a running link (EBUSY, what Debian 12's 6.1 does); newer
// ones allow it. Either answer is correct kernel behaviour; anything else is our bug.
TEST_F(LibnlLinkTest, RenameWhileUpIsEbusyOrAllowedByNewerKernels) {
  const int va = index("va");
  ASSERT_TRUE(nl_->setUp(va, true).ok());
  auto r = nl_->rename(va, "net1");
  if (r.ok()) {
    EXPECT_EQ(nl_->linkByIndex(va)->name, "net1");
  } else {
    EXPECT_EQ(r.error().code, ErrorCode::kNetlinkFailure);
    EXPECT_EQ(r.error().sys_errno, EBUSY);
  }
}

TEST_F(LibnlLinkTest, RenameToTakenNameIsEexist) {
  auto r = nl_->rename(index("va"), "vb");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().sys_errno, EEXIST);
}

TEST_F(LibnlLinkTest, SetMtuAndOutOfRangeIsEinval) {
  const int va = index("va");
  ASSERT_TRUE(nl_->setMtu(va, 9000).ok());
  EXPECT_EQ(nl_->linkByIndex(va)->mtu, 9000u);
  auto r = nl_->setMtu(va, 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().sys_errno, EINVAL);
}

TEST_F(LibnlLinkTest, SetMac) {
  const int va = index("va");
  const auto mac = MacAddress::parse("02:12:34:56:78:9a").value();
  ASSERT_TRUE(nl_->setMac(va, mac).ok());
  EXPECT_EQ(nl_->linkByIndex(va)->mac, mac);
  auto bad = nl_->setMac(va, MacAddress::parse("01:00:5e:00:00:01").value());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().sys_errno, EADDRNOTAVAIL);
}

TEST_F(LibnlLinkTest, MoveToNetnsAndBack) {
  ScratchNetns other;
  ASSERT_TRUE(other.ok());
  auto there = NetnsHandle::open(other.path());
  auto here = NetnsHandle::open("/proc/thread-self/ns/net");
  ASSERT_TRUE(there.ok() && here.ok());
  const int va = index("va");
  ASSERT_TRUE(nl_->moveToNetns(va, there->fd()).ok());
  EXPECT_EQ(nl_->linkByName("va").error().code, ErrorCode::kDeviceNotFound);
  SetnsRunner runner;
  int seen_index = 0;
  auto st = runner.run(other.path(), [&](Netlink& nl) -> Status {
    RDMANET_ASSIGN_OR_RETURN(LinkInfo l, nl.linkByName("va"));
    seen_index = l.ifindex;
    return nl.moveToNetns(l.ifindex, here->fd());
  });
  ASSERT_TRUE(st.ok()) << st.error().msg;
  EXPECT_EQ(seen_index, va);  // the ifindex was free in the target, so it was kept
  EXPECT_TRUE(nl_->linkByName("va").ok());
}

TEST_F(LibnlLinkTest, AddressesV4AndV6) {
  const int va = index("va");
  ASSERT_TRUE(nl_->addAddress(va, pfx("10.77.0.2/24")).ok());
  ASSERT_TRUE(nl_->addAddress(va, pfx("fd00:77::2/64")).ok());
  auto dup = nl_->addAddress(va, pfx("10.77.0.2/24"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().sys_errno, EEXIST);
  auto list = nl_->addresses(va);
  ASSERT_TRUE(list.ok()) << list.error().msg;
  EXPECT_NE(std::find(list->begin(), list->end(), pfx("10.77.0.2/24")), list->end());
  EXPECT_NE(std::find(list->begin(), list->end(), pfx("fd00:77::2/64")), list->end());
  ASSERT_TRUE(nl_->deleteAddress(va, pfx("10.77.0.2/24")).ok());
  ASSERT_TRUE(nl_->deleteAddress(va, pfx("10.77.0.2/24")).ok()) << "second delete must succeed";
  list = nl_->addresses(va);
  EXPECT_EQ(std::find(list->begin(), list->end(), pfx("10.77.0.2/24")), list->end());
}

TEST_F(LibnlLinkTest, RoutesWithGatewayV4AndV6) {
  const int va = index("va");
  ASSERT_TRUE(nl_->setUp(va, true).ok());
  ASSERT_TRUE(nl_->setUp(index("vb"), true).ok());
  ASSERT_TRUE(nl_->addAddress(va, pfx("10.77.0.2/24")).ok());
  ASSERT_TRUE(nl_->addAddress(va, pfx("fd00:77::2/64")).ok());
  Route v4{.dst = pfx("10.88.0.0/16"), .gateway = addr("10.77.0.1"), .ifindex = va};
  Route v6{.dst = pfx("fd00:88::/64"), .gateway = addr("fd00:77::1"), .ifindex = va};
  Route def{.dst = pfx("0.0.0.0/0"), .gateway = addr("10.77.0.1"), .ifindex = va};
  for (const Route& r : {v4, v6, def}) {
    auto st = nl_->addRoute(r);
    ASSERT_TRUE(st.ok()) << st.error().msg;
  }
  EXPECT_EQ(nl_->addRoute(v4).error().sys_errno, EEXIST);
  auto routes = nl_->routes(va);
  ASSERT_TRUE(routes.ok()) << routes.error().msg;
  for (const Route& r : {v4, v6, def}) {
    EXPECT_NE(std::find(routes->begin(), routes->end(), r), routes->end()) << r.dst.str();
  }
  ASSERT_TRUE(nl_->deleteRoute(v4).ok());
  ASSERT_TRUE(nl_->deleteRoute(v4).ok()) << "second delete must succeed";
  ASSERT_TRUE(nl_->deleteRoute(v6).ok());
  routes = nl_->routes(va);
  EXPECT_EQ(std::find(routes->begin(), routes->end(), v4), routes->end());
  EXPECT_EQ(std::find(routes->begin(), routes->end(), v6), routes->end());
}

TEST_F(LibnlLinkTest, RouteViaUnreachableGatewayIsRefused) {
  const int va = index("va");
  ASSERT_TRUE(nl_->setUp(va, true).ok());
  Route r{.dst = pfx("10.88.0.0/16"), .gateway = addr("192.0.2.1"), .ifindex = va};
  auto st = nl_->addRoute(r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().sys_errno, ENETUNREACH);
}

TEST_F(LibnlLinkTest, DeleteLink) {
  const int va = index("va");
  ASSERT_TRUE(nl_->deleteLink(va).ok());
  EXPECT_EQ(nl_->linkByIndex(va).error().code, ErrorCode::kDeviceNotFound);
  EXPECT_EQ(nl_->deleteLink(va).error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(LibnlLinkTest, DcbOnVethIsUnsupportedNotAnError) {
  auto d = nl_->dcb("va");
  ASSERT_TRUE(d.ok()) << d.error().msg;
  EXPECT_FALSE(d->supported);
}

TEST_F(LibnlLinkTest, RdmaNetlinkAbsentIsRdmaFailureWithEprotonosupport) {
  const int probe = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 20 /* NETLINK_RDMA */);
  if (probe >= 0) {
    ::close(probe);
    GTEST_SKIP() << "this kernel has RDMA netlink; the real RDMA path runs in the VM harness";
  }
  auto mode = nl_->rdmaNetnsMode();
  ASSERT_FALSE(mode.ok());
  EXPECT_EQ(mode.error().code, ErrorCode::kRdmaFailure);
  EXPECT_EQ(mode.error().sys_errno, EPROTONOSUPPORT);
  auto here = NetnsHandle::open("/proc/thread-self/ns/net");
  auto mv = nl_->moveRdmaToNetns("mlx5_0", here->fd());
  EXPECT_EQ(mv.error().code, ErrorCode::kRdmaFailure);
}

// Macvlan, one test per mode, checked against what `ip -d link` reports.
class LibnlMacvlanTest : public LibnlNetnsTest,
                         public ::testing::WithParamInterface<std::pair<MacvlanMode, const char*>> {
};

TEST_P(LibnlMacvlanTest, CreatesMacvlanInMode) {
  const auto [mode, word] = GetParam();
  MacvlanSpec spec;
  spec.name = "mv0";
  spec.master_ifindex = index("va");
  spec.mode = mode;
  spec.mtu = 1400;
  auto idx = nl_->addMacvlan(spec);
  ASSERT_TRUE(idx.ok()) << idx.error().msg;
  auto l = nl_->linkByIndex(*idx);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->kind, "macvlan");
  EXPECT_EQ(l->parent_ifindex, spec.master_ifindex);
  EXPECT_EQ(l->mtu, 1400u);
  EXPECT_NE(ipDetails("mv0").find(std::string("macvlan mode ") + word), std::string::npos)
      << ipDetails("mv0");
}

INSTANTIATE_TEST_SUITE_P(AllModes, LibnlMacvlanTest,
                         ::testing::Values(std::pair{MacvlanMode::kPrivate, "private"},
                                           std::pair{MacvlanMode::kVepa, "vepa"},
                                           std::pair{MacvlanMode::kBridge, "bridge"},
                                           std::pair{MacvlanMode::kPassthru, "passthru"}),
                         [](const auto& info) { return std::string(info.param.second); });

TEST_F(LibnlLinkTest, MacvlanPassthruAllowsOnlyOnePerMaster) {
  MacvlanSpec spec;
  spec.name = "mv0";
  spec.master_ifindex = index("va");
  spec.mode = MacvlanMode::kPassthru;
  ASSERT_TRUE(nl_->addMacvlan(spec).ok());
  spec.name = "mv1";
  auto second = nl_->addMacvlan(spec);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().sys_errno, EINVAL);
}

TEST_F(LibnlLinkTest, MacvlanWithTakenNameIsEexistAndMissingMasterIsNotFound) {
  MacvlanSpec spec;
  spec.name = "vb";
  spec.master_ifindex = index("va");
  EXPECT_EQ(nl_->addMacvlan(spec).error().sys_errno, EEXIST);
  spec.name = "mv0";
  spec.master_ifindex = 99999;
  EXPECT_EQ(nl_->addMacvlan(spec).error().code, ErrorCode::kDeviceNotFound);
}

TEST_F(LibnlLinkTest, MacvlanCreatedDirectlyInAnotherNamespace) {
  ScratchNetns other;
  ASSERT_TRUE(other.ok());
  auto there = NetnsHandle::open(other.path());
  ASSERT_TRUE(there.ok());
  MacvlanSpec spec;
  spec.name = "pod0";
  spec.master_ifindex = index("va");
  spec.mac = MacAddress::parse("02:aa:bb:cc:dd:ee").value();
  spec.netns_fd = there->fd();
  auto r = nl_->addMacvlan(spec);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, 0);
  EXPECT_EQ(nl_->linkByName("pod0").error().code, ErrorCode::kDeviceNotFound);
  SetnsRunner runner;
  MacAddress seen;
  ASSERT_TRUE(runner
                  .run(other.path(),
                       [&](Netlink& nl) -> Status {
                         RDMANET_ASSIGN_OR_RETURN(LinkInfo l, nl.linkByName("pod0"));
                         seen = l.mac;
                         return okStatus();
                       })
                  .ok());
  EXPECT_EQ(seen, *spec.mac);
}

}  // namespace
}  // namespace rdmanet::testing
