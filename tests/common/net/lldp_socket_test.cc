// LldpSocket against a real LLDP sender: Debian's lldpd in a "switch" namespace sends on its end
// of a veth; the socket listens in the "node" namespace on the other end. Needs root and lldpd
// (hack/install-deps.sh); skips clearly otherwise.
#include "common/net/lldp_socket.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "tests/common/net/netns_helpers.h"

namespace rdmanet {
namespace {

using namespace std::chrono_literals;
using testing::Background;
using testing::EnterNetns;
using testing::ip;
using testing::ScratchNetns;
namespace fs = std::filesystem;

constexpr const char* kLldpd = "/usr/sbin/lldpd";

class LldpSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::isRoot()) GTEST_SKIP() << "needs root: namespaces and veths";
    if (::access(kLldpd, X_OK) != 0) GTEST_SKIP() << "needs lldpd (hack/install-deps.sh)";
    ASSERT_TRUE(sw_.ok() && node_.ok());
    // n0 and n1 on the node, s0 and s1 their switch ports.
    for (int i : {0, 1}) {
      ASSERT_TRUE(ip({"-n", node_.name(), "link", "add", fmt::format("n{}", i), "type", "veth",
                      "peer", "name", fmt::format("s{}", i), "netns", sw_.name()}));
      ASSERT_TRUE(ip({"-n", node_.name(), "link", "set", fmt::format("n{}", i), "up"}));
      ASSERT_TRUE(ip({"-n", sw_.name(), "link", "set", fmt::format("s{}", i), "up"}));
    }
    dir_ = fs::temp_directory_path() / fmt::format("rdmanet-lldp-{}-{}", ::getpid(), ++counter_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    lldpd_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // lldpd on the switch's ports `ifaces` (a pattern list), named `hostname`, sending every
  // second with port IDs by interface name.
  void startLldpd(const std::string& hostname, const std::string& ifaces) {
    std::ofstream(dir_ / "lldpd.conf") << fmt::format(
        "configure system hostname {}\nconfigure lldp portidsubtype ifname\n"
        "configure lldp tx-interval 1\n",
        hostname);
    lldpd_ = std::make_unique<Background>(
        std::vector<std::string>{"/usr/bin/ip", "netns", "exec", sw_.name(), kLldpd, "-d", "-u",
                                 (dir_ / "lldpd.sock").string(), "-O",
                                 (dir_ / "lldpd.conf").string(), "-I", ifaces},
        (dir_ / "lldpd.log").string());
    ASSERT_TRUE(lldpd_->ok());
  }
  // Frames until `done` holds of what arrived, or 10 s.
  std::vector<LldpReceived> receive(
      LldpSocket& s, const std::function<bool(const std::vector<LldpReceived>&)>& done) {
    std::vector<LldpReceived> got;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done(got) && std::chrono::steady_clock::now() < deadline) {
      pollfd p{s.fd(), POLLIN, 0};
      if (::poll(&p, 1, 200) > 0) {
        for (auto& r : s.drain()) got.push_back(std::move(r));
      }
    }
    return got;
  }
  std::string lldpdLog() {
    std::ifstream f(dir_ / "lldpd.log");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

  static inline int counter_ = 0;
  ScratchNetns sw_, node_;
  fs::path dir_;
  std::unique_ptr<Background> lldpd_;
};

TEST_F(LldpSocketTest, HearsTheSwitchOnTheNetdevsListenedOnOnly) {
  EnterNetns in(node_.path());
  ASSERT_TRUE(in.ok());
  auto s = LldpSocket::open();
  ASSERT_TRUE(s.ok()) << s.error().msg;
  auto failed = s->listen({"n0", "gone0"});
  EXPECT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed["gone0"], "no such netdev");
  startLldpd("leaf-7", "s0,s1");

  auto got = receive(*s, [](const auto& g) { return g.size() >= 3; });
  ASSERT_GE(got.size(), 3u) << lldpdLog();
  for (const LldpReceived& r : got) {
    EXPECT_EQ(r.netdev, "n0");  // s1 sends to n1 too, which is not listened on
    ASSERT_TRUE(r.neighbor.ok()) << r.neighbor.error().msg;
    EXPECT_EQ(r.neighbor->system_name, "leaf-7");
    EXPECT_EQ(r.neighbor->port_id, "s0");
    EXPECT_EQ(r.neighbor->port_id_subtype, 5);
    EXPECT_GT(r.neighbor->ttl_seconds, 0);
  }

  // Listening moves to n1 alone: its frames arrive, n0's no longer do.
  EXPECT_TRUE(s->listen({"n1"}).empty());
  (void)s->drain();
  got = receive(*s, [](const auto& g) { return g.size() >= 2; });
  ASSERT_GE(got.size(), 2u) << lldpdLog();
  for (const LldpReceived& r : got) {
    EXPECT_EQ(r.netdev, "n1");
    ASSERT_TRUE(r.neighbor.ok());
    EXPECT_EQ(r.neighbor->port_id, "s1");
  }

  // lldpd shutting down says so: a frame with TTL 0.
  lldpd_->stop();
  got = receive(*s, [](const auto& g) {
    return !g.empty() && g.back().neighbor.ok() && g.back().neighbor->ttl_seconds == 0;
  });
  ASSERT_FALSE(got.empty()) << lldpdLog();
  ASSERT_TRUE(got.back().neighbor.ok());
  EXPECT_EQ(got.back().neighbor->ttl_seconds, 0);
}

TEST_F(LldpSocketTest, ANetdevMadeAgainUnderItsNameIsJoinedAgain) {
  EnterNetns in(node_.path());
  ASSERT_TRUE(in.ok());
  auto s = LldpSocket::open();
  ASSERT_TRUE(s.ok()) << s.error().msg;
  EXPECT_TRUE(s->listen({"n0"}).empty());
  // n0 is deleted and made again: a new ifindex behind the same name.
  ASSERT_TRUE(ip({"-n", node_.name(), "link", "del", "n0"}));
  ASSERT_TRUE(ip({"-n", node_.name(), "link", "add", "n0", "type", "veth", "peer", "name", "s0",
                  "netns", sw_.name()}));
  ASSERT_TRUE(ip({"-n", node_.name(), "link", "set", "n0", "up"}));
  ASSERT_TRUE(ip({"-n", sw_.name(), "link", "set", "s0", "up"}));
  EXPECT_TRUE(s->listen({"n0"}).empty());
  startLldpd("leaf-8", "s0");
  auto got = receive(*s, [](const auto& g) { return !g.empty(); });
  ASSERT_FALSE(got.empty()) << lldpdLog();
  EXPECT_EQ(got.front().netdev, "n0");
  ASSERT_TRUE(got.front().neighbor.ok());
  EXPECT_EQ(got.front().neighbor->system_name, "leaf-8");
}

}  // namespace
}  // namespace rdmanet
