// LinkMonitor against the real kernel: notifications in a throw-away namespace.
#include "common/net/link_monitor.h"

#include <poll.h>
#include <sys/socket.h>

#include <chrono>

#include "tests/common/net/libnl_fixture.h"

namespace rdmanet::testing {
namespace {

using LinkMonitorTest = LibnlNetnsTest;

// Polls and drains until `pred` holds or the deadline passes (no sleeps).
template <typename Pred>
bool waitFor(LinkMonitor& m, const LinkMonitor::Callback& cb, Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!pred()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{.fd = m.fd(), .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) < 0) return false;
    if (!m.drain(cb).ok()) return false;
  }
  return true;
}

TEST_F(LinkMonitorTest, SeesLinkGoingDownAndBeingDeleted) {
  auto mon = LinkMonitor::open();
  ASSERT_TRUE(mon.ok()) << mon.error().msg;
  const int va = index("va");
  ASSERT_TRUE(nl_->setUp(va, true).ok());
  bool saw_up = false;
  bool saw_down = false;
  bool saw_deleted = false;
  auto cb = [&](const LinkInfo& l, bool deleted) {
    if (l.name != "va") return;
    if (deleted) {
      saw_deleted = true;
    } else if (l.admin_up) {
      saw_up = true;
    } else if (saw_up) {
      saw_down = true;
    }
  };
  ASSERT_TRUE(waitFor(**mon, cb, [&] { return saw_up; }));
  ASSERT_TRUE(nl_->setUp(va, false).ok());
  ASSERT_TRUE(waitFor(**mon, cb, [&] { return saw_down; }));
  ASSERT_TRUE(nl_->deleteLink(va).ok());
  ASSERT_TRUE(waitFor(**mon, cb, [&] { return saw_deleted; }));
  EXPECT_FALSE((*mon)->takeResync());
}

TEST_F(LinkMonitorTest, OverflowAsksForResync) {
  auto mon = LinkMonitor::open();
  ASSERT_TRUE(mon.ok());
  // Shrink the receive buffer to the minimum so a burst of events overflows it.
  const int tiny = 1;
  ASSERT_EQ(::setsockopt((*mon)->fd(), SOL_SOCKET, SO_RCVBUFFORCE, &tiny, sizeof(tiny)), 0);
  const int va = index("va");
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(nl_->setUp(va, i % 2 == 0).ok());
  int events = 0;
  ASSERT_TRUE((*mon)->drain([&](const LinkInfo&, bool) { ++events; }).ok());
  EXPECT_TRUE((*mon)->takeResync());
  EXPECT_FALSE((*mon)->takeResync()) << "the flag clears once taken";
  EXPECT_LT(events, 200);
}

}  // namespace
}  // namespace rdmanet::testing
