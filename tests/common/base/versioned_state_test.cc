// VersionedState: the one "latest snapshot, and a wait for a newer one" of the device-plugin pool
// and the DRA device state. Timed waits are on a FakeClock.
#include "common/base/versioned_state.h"

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>

#include "tests/fakes/fake_clock.h"

namespace rdmanet {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

struct Stamped {
  std::string text{};
  uint64_t version = 0;
};

TEST(VersionedStateTest, EachPublishIsTheNextVersionAndCanStampIt) {
  VersionedState<Stamped> state;
  EXPECT_EQ(state.current().version, 0u);
  EXPECT_EQ(state.publish({.text = "a"}), 1u);
  EXPECT_EQ(state.publish({.text = "b"}, [](Stamped& s, uint64_t v) { s.version = v; }), 2u);
  const auto cur = state.current();
  EXPECT_EQ(cur.version, 2u);
  EXPECT_EQ(cur.value->text, "b");
  EXPECT_EQ(cur.value->version, 2u);
}

TEST(VersionedStateTest, AWaitReturnsANewerVersionAtOnce) {
  FakeClock clock;
  VersionedState<std::string> state("first", 1);
  state.publish("second");
  const auto got = state.waitNewer(1, clock, clock.now() + 1s);
  ASSERT_NE(got.value, nullptr);
  EXPECT_EQ(got.version, 2u);
  EXPECT_EQ(*got.value, "second");
}

TEST(VersionedStateTest, APublishWakesAWaiter) {
  FakeClock clock;
  VersionedState<std::string> state;
  auto waiter = std::async(std::launch::async,
                           [&] { return state.waitNewer(0, clock, Clock::time_point::max()); });
  ASSERT_TRUE(clock.waitIdle());
  state.publish("x");
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(*waiter.get().value, "x");
}

TEST(VersionedStateTest, AWaitEndsEmptyWhenItsTimePassesOnTheClock) {
  FakeClock clock;
  VersionedState<std::string> state;
  const auto until = clock.now() + 10s;
  auto waiter = std::async(std::launch::async, [&] { return state.waitNewer(0, clock, until); });
  ASSERT_TRUE(clock.waitIdle());
  clock.advance(10s - 1ms);
  ASSERT_TRUE(clock.waitIdle());
  EXPECT_EQ(waiter.wait_for(0s), std::future_status::timeout);
  clock.advance(1ms);
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waiter.get().value, nullptr);
}

TEST(VersionedStateTest, StopEndsEveryWaitNowAndLater) {
  FakeClock clock;
  VersionedState<std::string> state;
  auto waiter = std::async(std::launch::async,
                           [&] { return state.waitNewer(0, clock, Clock::time_point::max()); });
  ASSERT_TRUE(clock.waitIdle());
  state.stop();
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waiter.get().value, nullptr);
  state.publish("late");
  EXPECT_TRUE(state.stopped());
  EXPECT_EQ(state.waitNewer(0, clock, Clock::time_point::max()).value, nullptr);
}

TEST(VersionedStateTest, ACancelledWaitEndsEmptyOnceKicked) {
  VersionedState<std::string> state;
  std::atomic<bool> cancel{false};
  auto waiter = std::async(std::launch::async, [&] { return state.waitNewer(0, 1h, &cancel); });
  cancel = true;
  state.kick();
  // A kick that came before the waiter slept is seen when it looks at the flag.
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waiter.get().value, nullptr);
}

}  // namespace
}  // namespace rdmanet
