// RDMA netlink against the real kernel: the device/port/netdev links of a Soft-RoCE device made
// on the fixture's veth. This host kernel has no RDMA netlink, so the test skips here; the VM
// harness runs the same binary (tests/vm/netlink_gtest.sh fails unless it passed there).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "tests/common/net/libnl_fixture.h"

namespace rdmanet::testing {
namespace {

class LibnlRdmaTest : public LibnlNetnsTest {
 protected:
  void SetUp() override {
    LibnlNetnsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const int probe = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 20 /* NETLINK_RDMA */);
    if (probe < 0) {
      GTEST_SKIP() << "kernel has no RDMA netlink; the VM harness runs this test on one that has";
    }
    ::close(probe);
  }
  void TearDown() override {
    if (!rxe_.empty()) rdma({"link", "delete", rxe_});
    LibnlNetnsTest::TearDown();
  }
  // `rdma ARGS...` inside the scratch namespace (where `va` lives).
  bool rdma(const std::vector<std::string>& args, std::string* err = nullptr) {
    std::vector<std::string> argv{"netns", "exec", ns_->name(), "/usr/bin/rdma"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ip(argv, err);
  }
  static const RdmaLink* find(const std::vector<RdmaLink>& links, const std::string& dev) {
    auto it = std::find_if(links.begin(), links.end(),
                           [&](const RdmaLink& l) { return l.device == dev; });
    return it == links.end() ? nullptr : &*it;
  }
  std::string rxe_;
};

TEST_F(LibnlRdmaTest, ListsASoftRocePortWithItsNetdevOnlyInTheNetdevsNamespace) {
  const std::string dev = "rxet" + std::to_string(::getpid() % 100000);
  std::string err;
  ASSERT_TRUE(rdma({"link", "add", dev, "type", "rxe", "netdev", "va"}, &err)) << err;
  rxe_ = dev;

  auto here = nl_->rdmaLinks();
  ASSERT_TRUE(here.ok()) << here.error().msg;
  const RdmaLink* l = find(*here, dev);
  ASSERT_NE(l, nullptr) << dev << " not listed";
  EXPECT_EQ(l->port, 1u);
  EXPECT_EQ(l->netdev, "va");
  EXPECT_EQ(l->netdev_ifindex, index("va"));

  // From the initial namespace (shared RDMA netns mode, the default) the device is visible but
  // the kernel does not name a netdev that lives elsewhere.
  EnterNetns init("/proc/1/ns/net");
  ASSERT_TRUE(init.ok());
  auto host = LibnlNetlink::open();
  ASSERT_TRUE(host.ok()) << host.error().msg;
  ASSERT_EQ((*host)->rdmaNetnsMode().value(), RdmaNetnsMode::kShared);
  auto there = (*host)->rdmaLinks();
  ASSERT_TRUE(there.ok()) << there.error().msg;
  l = find(*there, dev);
  ASSERT_NE(l, nullptr) << dev << " not listed from the initial namespace";
  EXPECT_EQ(l->netdev, "");
  EXPECT_EQ(l->netdev_ifindex, 0);
}

}  // namespace
}  // namespace rdmanet::testing
