// The daemon's periodic node doctor: runs on its own thread against a simulated node (fake sysfs
// tree) and the fake kernel's DCB state, keeps the last report as Prometheus text, and reports
// counter growth since its previous run.
#include "deviceplugin/daemon/doctor_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <thread>

#include "tests/deviceplugin/doctor/doctor_node.h"

namespace rdmanet::dp {
namespace {

using doctor::testing::DoctorNode;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const std::string kHw = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/";

// Polls `pred` until it holds or `timeout` passes (no fixed sleeps: STYLE.md §6).
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

// The runner reads while the test writes: replace the file whole, as the kernel's sysfs reads
// never see a half-written value.
void writeCounter(DoctorNode& node, const std::string& name, const std::string& value) {
  const std::filesystem::path p = node.root().string() + kHw + name;
  const std::filesystem::path tmp = node.root() / "counter.tmp";  // outside the listed dir
  std::ofstream(tmp) << value << "\n";
  std::filesystem::rename(tmp, p);
}

NetlinkFactory fakeNetlink(DoctorNode& node) {
  return [&node]() -> Result<std::unique_ptr<Netlink>> {
    return std::unique_ptr<Netlink>(std::make_unique<FakeNetlink>(node.kernel()));
  };
}

// The daemon's start-up path (discovery, registration) never shares the CPUs with a doctor run:
// a held runner does not run until released.
TEST(DoctorRunnerTest, HeldRunnerWaitsForReleaseBeforeItsFirstRun) {
  DoctorNode node;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h, .hold = 1h}, fakeNetlink(node));
  ASSERT_TRUE(eventually([&] { return runner.holding(); }));
  EXPECT_EQ(runner.runs(), 0u);
  EXPECT_EQ(runner.render(), "");
  runner.release();
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  EXPECT_FALSE(runner.holding());
}

TEST(DoctorRunnerTest, HeldRunnerStartsAnywayWhenNothingReleasesIt) {
  DoctorNode node;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h, .hold = 50ms}, fakeNetlink(node));
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
}

TEST(DoctorRunnerTest, FirstRunHappensAtOnceAndExportsEveryCheck) {
  DoctorNode node;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h}, fakeNetlink(node));
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  const std::string text = runner.render();
  EXPECT_THAT(text, HasSubstr("# TYPE rdmanet_doctor_check gauge\n"));
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"link\",device=\"ens1f0\"} 0\n"));
  // The fake kernel answers DCB, so PFC is judged (PASS), not UNKNOWN.
  EXPECT_THAT(text, HasSubstr("rdmanet_doctor_check{check=\"pfc\",device=\"ens1f0\"} 0\n"));
  // No baseline on the first run: no deltas yet.
  EXPECT_THAT(text, Not(HasSubstr("rdmanet_doctor_counter_delta")));
}

TEST(DoctorRunnerTest, APortGoingDownIsSeenOnTheNextRun) {
  DoctorNode node;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 20ms}, fakeNetlink(node));
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  node.tree().setNetdevUp("ens1f1", false);
  const std::string down = "rdmanet_doctor_check{check=\"link\",device=\"ens1f1\"} 2\n";
  ASSERT_TRUE(eventually([&] { return runner.render().find(down) != std::string::npos; }))
      << runner.render();
  node.tree().setNetdevUp("ens1f1", true);
  const std::string up = "rdmanet_doctor_check{check=\"link\",device=\"ens1f1\"} 0\n";
  EXPECT_TRUE(eventually([&] { return runner.render().find(up) != std::string::npos; }))
      << runner.render();
}

TEST(DoctorRunnerTest, CounterDeltasAreSinceThePreviousRun) {
  DoctorNode node;
  node.tree().writeAttr(kHw + "out_of_sequence", "100");
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 20ms}, fakeNetlink(node));
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 2; }));
  const std::string prefix =
      "rdmanet_doctor_counter_delta{port=\"mlx5_0/1\",counter=\"out_of_sequence\","
      "class=\"retransmit\"} ";
  // Steady counters: growth 0 from one run to the next.
  EXPECT_THAT(runner.render(), HasSubstr(prefix + "0\n"));
  writeCounter(node, "out_of_sequence", "130");
  ASSERT_TRUE(eventually([&] {
    return runner.render().find(prefix + "30\n") != std::string::npos;
  })) << runner.render();
  // The next run's baseline is the run that saw 130: back to 0.
  EXPECT_TRUE(eventually([&] { return runner.render().find(prefix + "0\n") != std::string::npos; }))
      << runner.render();
}

TEST(DoctorRunnerTest, WithoutNetlinkTheDcbChecksAreUnknown) {
  DoctorNode node;
  DoctorRunner runner({.sysfs_root = node.root(), .interval = 1h},
                      []() -> Result<std::unique_ptr<Netlink>> {
                        return makeError(ErrorCode::kNetlinkFailure, "no socket in this test");
                      });
  ASSERT_TRUE(eventually([&] { return runner.runs() >= 1; }));
  EXPECT_THAT(runner.render(),
              HasSubstr("rdmanet_doctor_check{check=\"pfc\",device=\"ens1f0\"} 3\n"));
}

TEST(DoctorRunnerTest, StopsPromptlyWhileWaitingForTheNextRun) {
  DoctorNode node;
  auto runner = std::make_unique<DoctorRunner>(
      DoctorRunnerOptions{.sysfs_root = node.root(), .interval = 1h}, fakeNetlink(node));
  ASSERT_TRUE(eventually([&] { return runner->runs() >= 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  runner.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

}  // namespace
}  // namespace rdmanet::dp
