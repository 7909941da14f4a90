#include "tests/fakes/fake_link_monitor.h"

#include <gtest/gtest.h>
#include <poll.h>

#include "tests/fakes/fake_netlink.h"

namespace rdmanet {
namespace {

bool readable(int fd) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(FakeLinkMonitorTest, ReportsStateChangesAndDeletionsInItsNamespace) {
  FakeKernel kernel;
  const int master = kernel.addLink(FakeKernel::kHost, "veth0", "veth");
  FakeLinkMonitor mon(kernel);
  FakeNetlink nl(kernel);
  EXPECT_FALSE(readable(mon.fd()));
  ASSERT_TRUE(nl.setUp(master, true).ok());
  EXPECT_TRUE(readable(mon.fd()));
  std::vector<std::pair<std::string, bool>> events;
  auto cb = [&](const LinkInfo& l, bool deleted) {
    events.emplace_back(l.name + (l.admin_up ? ":up" : ":down"), deleted);
  };
  ASSERT_TRUE(mon.drain(cb).ok());
  EXPECT_EQ(events, (std::vector<std::pair<std::string, bool>>{{"veth0:up", false}}));
  EXPECT_FALSE(readable(mon.fd()));
  events.clear();
  ASSERT_TRUE(nl.deleteLink(master).ok());
  ASSERT_TRUE(mon.drain(cb).ok());
  EXPECT_EQ(events, (std::vector<std::pair<std::string, bool>>{{"veth0:up", true}}));
}

TEST(FakeLinkMonitorTest, CarrierLossIsReported) {
  FakeKernel kernel;
  kernel.addPf(FakeKernel::kHost, "ens1f0", 2);
  FakeLinkMonitor mon(kernel);
  kernel.setCarrier(FakeKernel::kHost, "ens1f0", false);
  ASSERT_TRUE(readable(mon.fd()));
  std::string state;
  ASSERT_TRUE(mon.drain([&](const LinkInfo& l, bool) { state = l.operstate; }).ok());
  EXPECT_EQ(state, "down");
}

TEST(FakeLinkMonitorTest, OverflowAsksForResyncOnce) {
  FakeKernel kernel;
  FakeLinkMonitor mon(kernel);
  mon.overflow();
  EXPECT_TRUE(readable(mon.fd()));
  ASSERT_TRUE(mon.drain([](const LinkInfo&, bool) {}).ok());
  EXPECT_TRUE(mon.takeResync());
  EXPECT_FALSE(mon.takeResync());
}

}  // namespace
}  // namespace rdmanet
