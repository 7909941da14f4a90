// hack/simnode up/link/down against the real kernel: veths, a bridge namespace and the tree.
// Needs root (label integration); each test uses its own --ifprefix and root so tests can run
// in parallel with each other and with another simnode.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/base/sysfs.h"
#include "tests/fakes/eventually.h"
#include "tests/simnode/command.h"
#include "tests/simnode/manifest.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::sim {
namespace {

namespace fs = std::filesystem;

class SimnodeIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: creates veths and a network namespace";
    if (runCommand({"ip", "-V"}).rc != 0) GTEST_SKIP() << "needs iproute2 (`ip`)";
    // Unique per process and test: "i" + 3 hex digits of the pid + a letter per test.
    const char* name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    prefix_ = fmt::format("i{:03x}{}", static_cast<unsigned>(::getpid()) & 0xfff,
                          static_cast<char>('a' + (std::hash<std::string>{}(name) % 26)));
    root_ = dir_.path() / "node";
  }
  void TearDown() override {
    if (!root_.empty() && fs::exists(manifestPath(root_))) (void)run({"down"});
    for (const auto& extra : cleanup_) (void)runCommand({"ip", "link", "del", extra});
  }
  CommandResult run(std::vector<std::string> args) {
    args.insert(args.begin(), RDMANET_SIMNODE_BIN);
    args.push_back("--root");
    args.push_back(root_.string());
    return runCommand(args);
  }
  CommandResult up() {
    return run({"up", "--ifprefix", prefix_, "--topology",
                RDMANET_SOURCE_DIR "/hack/topologies/default.json"});
  }
  bool hostHasLink(const std::string& name) { return fs::exists("/sys/class/net/" + name); }
  // Every host link whose name starts with our prefix.
  std::vector<std::string> ourHostLinks() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator("/sys/class/net")) {
      const std::string n = e.path().filename().string();
      if (n.starts_with(prefix_)) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string netns() const { return "rdmanet-sim-" + prefix_; }

  TempDir dir_{"rdmanet-simnode-it"};
  fs::path root_;
  std::string prefix_;
  std::vector<std::string> cleanup_;
};

TEST_F(SimnodeIntegrationTest, UpThenDownLeavesNothingBehind) {
  const auto u = up();
  ASSERT_EQ(u.rc, 0) << u.out;
  // Up made real veths named like the tree's netdevs, with their real ifindex in the tree.
  EXPECT_EQ(ourHostLinks().size(), 20u);
  EXPECT_TRUE(fs::exists("/run/netns/" + netns()));
  const Sysfs fake(root_);
  const std::string pf = prefix_ + "ens1f0";
  ASSERT_TRUE(hostHasLink(pf));
  EXPECT_EQ(fake.readInt("/sys/class/net/" + pf + "/ifindex"),
            Sysfs("/").readInt("/sys/class/net/" + pf + "/ifindex"));
  EXPECT_EQ(fake.readOpt("/sys/class/net/" + pf + "/address"),
            Sysfs("/").readOpt("/sys/class/net/" + pf + "/address"));
  EXPECT_EQ(fs::status(manifestPath(root_)).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  const auto d = run({"down"});
  ASSERT_EQ(d.rc, 0) << d.out;
  EXPECT_TRUE(ourHostLinks().empty());
  EXPECT_FALSE(fs::exists("/run/netns/" + netns()));
  EXPECT_FALSE(fs::exists(root_)) << "down must remove the root it created";
}

TEST_F(SimnodeIntegrationTest, DownRefusesAnInterfaceItDidNotCreate) {
  ASSERT_EQ(up().rc, 0);
  // Replace one of our veths by a look-alike with the same name but no marker.
  const std::string name = prefix_ + "ens1f0v0";
  ASSERT_EQ(runCommand({"ip", "link", "del", name}).rc, 0);
  const auto add =
      runCommand({"ip", "link", "add", name, "type", "veth", "peer", "name", prefix_ + "x"});
  ASSERT_EQ(add.rc, 0) << add.out;
  cleanup_.push_back(name);

  const auto d = run({"down"});
  EXPECT_EQ(d.rc, 2) << d.out;
  EXPECT_NE(d.out.find("refusing to delete " + name), std::string::npos) << d.out;
  EXPECT_TRUE(hostHasLink(name)) << "down deleted an interface it did not create";
  EXPECT_EQ(ourHostLinks(), (std::vector<std::string>{name, prefix_ + "x"}));
  EXPECT_FALSE(fs::exists("/run/netns/" + netns()));
}

TEST_F(SimnodeIntegrationTest, UpFailsCleanlyWhenANameIsTaken) {
  // Someone else's interface already has one of the names: up must fail, undo only its own
  // work, and leave that interface alone.
  const std::string taken = prefix_ + "ens2f0";
  const auto add =
      runCommand({"ip", "link", "add", taken, "type", "veth", "peer", "name", prefix_ + "y"});
  ASSERT_EQ(add.rc, 0) << add.out;
  cleanup_.push_back(taken);

  const auto u = up();
  EXPECT_EQ(u.rc, 1) << u.out;
  EXPECT_TRUE(hostHasLink(taken));
  EXPECT_EQ(ourHostLinks(), (std::vector<std::string>{taken, prefix_ + "y"}));
  EXPECT_FALSE(fs::exists("/run/netns/" + netns()));
  EXPECT_FALSE(fs::exists(root_));
}

TEST_F(SimnodeIntegrationTest, DownWithoutUpIsANoOp) {
  const auto d = run({"down"});
  EXPECT_EQ(d.rc, 0) << d.out;
  EXPECT_FALSE(fs::exists(root_));
}

TEST_F(SimnodeIntegrationTest, SecondUpOnSameRootIsRefused) {
  ASSERT_EQ(up().rc, 0);
  const auto again = up();
  EXPECT_NE(again.rc, 0);
  EXPECT_NE(again.out.find("already up"), std::string::npos) << again.out;
  EXPECT_EQ(ourHostLinks().size(), 20u);
}

TEST_F(SimnodeIntegrationTest, LinkDownDropsCarrierTreeStateAndRdmaPort) {
  ASSERT_EQ(up().rc, 0);
  const std::string vf = prefix_ + "ens2f0v1";
  const Sysfs fake(root_);
  const auto down = run({"link", vf, "down"});
  ASSERT_EQ(down.rc, 0) << down.out;
  EXPECT_EQ(fake.readOpt("/sys/class/net/" + vf + "/operstate"), "down");
  EXPECT_EQ(fake.readOpt("/sys/class/net/" + vf + "/carrier"), "0");
  EXPECT_EQ(fake.readOpt("/sys/class/net/" + vf + "/device/infiniband/mlx5_13/ports/1/state"),
            "1: DOWN");
  EXPECT_EQ(Sysfs("/").readOpt("/sys/class/net/" + vf + "/carrier"), "0");

  ASSERT_EQ(run({"link", vf, "up"}).rc, 0);
  EXPECT_EQ(fake.readOpt("/sys/class/net/" + vf + "/operstate"), "up");
  EXPECT_EQ(fake.readOpt("/sys/class/net/" + vf + "/device/infiniband/mlx5_13/ports/1/state"),
            "4: ACTIVE");
  EXPECT_EQ(Sysfs("/").readOpt("/sys/class/net/" + vf + "/carrier"), "1");
}

TEST_F(SimnodeIntegrationTest, TwoVfsInTwoNamespacesCanPing) {
  if (runCommand({"ping", "-V"}).rc != 0) GTEST_SKIP() << "needs ping (iputils-ping)";
  ASSERT_EQ(up().rc, 0);
  const std::string a = "rdmanet-it-" + prefix_ + "a";
  const std::string b = "rdmanet-it-" + prefix_ + "b";
  ASSERT_EQ(runCommand({"ip", "netns", "add", a}).rc, 0);
  ASSERT_EQ(runCommand({"ip", "netns", "add", b}).rc, 0);
  const std::string va = prefix_ + "ens1f0v2", vb = prefix_ + "ens2f1v3";
  for (const auto& cmd : std::vector<std::vector<std::string>>{
           {"ip", "link", "set", va, "netns", a},
           {"ip", "link", "set", vb, "netns", b},
           {"ip", "-n", a, "addr", "add", "10.231.0.1/24", "dev", va},
           {"ip", "-n", b, "addr", "add", "10.231.0.2/24", "dev", vb},
           {"ip", "-n", a, "link", "set", va, "up"},
           {"ip", "-n", b, "link", "set", vb, "up"}}) {
    const auto r = runCommand(cmd);
    EXPECT_EQ(r.rc, 0) << r.out;
  }
  const auto ping =
      runCommand({"ip", "netns", "exec", a, "ping", "-c", "1", "-W", "5", "10.231.0.2"});
  EXPECT_EQ(ping.rc, 0) << ping.out;
  // down must also take the ends that were moved into "pods".
  ASSERT_EQ(run({"down"}).rc, 0);
  // The kernel tears a deleted namespace down asynchronously (cleanup_net), so the moved end
  // goes away shortly after `down` returns: poll with a deadline.
  std::string left;
  EXPECT_TRUE(rdmanet::testing::eventually(
      [&] {
        left = runCommand({"ip", "-n", a, "-o", "link", "show"}).out;
        return left.find(va) == std::string::npos;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(20)))
      << left;
  (void)runCommand({"ip", "netns", "del", a});
  (void)runCommand({"ip", "netns", "del", b});
}

}  // namespace
}  // namespace rdmanet::sim
