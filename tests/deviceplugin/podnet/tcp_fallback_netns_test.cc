// The silent fallback to TCP through the real kernel (netns label; root, skipped otherwise).
// Three sriov pods on the simulated node, each with an eth1 that is a real veth in its own
// throw-away namespace, wired to a peer namespace that stands for the other ranks:
//   rank-1  sends real TCP over eth1 while its RDMA device's counters stand still (the fallback)
//   rank-0  sends as much TCP (a launcher's bootstrap, checkpoints) and its RDMA counters move
//           (simulated in the node's sysfs tree, as the other podnet tests do)
//   idle    sends nothing (the kernel's own IPv6 chatter only)
// The pod series count rank-1's bytes under its labels, in process and on the real daemon's
// /metrics, and `doctor pods`, with the seams the real command opens, fails rank-1 alone and
// names it. The traffic is moved
// between the two readings by the doctor's injected wait: a fixed amount, sent and received
// in full before the second reading, so nothing depends on timing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "cni/state/state_store.h"
#include "deviceplugin/doctor/host_seams.h"
#include "deviceplugin/doctor/pods.h"
#include "deviceplugin/podnet/pod_metrics.h"
#include "tests/common/net/netns_helpers.h"
#include "tests/deviceplugin/integration/harness.h"
#include "tests/deviceplugin/podnet/cni_state.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::podnet {
namespace {

namespace fs = std::filesystem;
using rdmanet::testing::EnterNetns;
using rdmanet::testing::ip;
using rdmanet::testing::ScratchNetns;

constexpr size_t kSent = 8 << 20;  // per transfer: 8 MiB in a 1 s interval, 8x the threshold
constexpr uint16_t kPort = 5201;

// `bytes` of TCP from `from` (a pod's netns) to `to_ip`:kPort in `to` (the peer's), all
// received before it returns. ok() false (with why) when a step failed.
::testing::AssertionResult sendTcp(const std::string& from, const std::string& to,
                                   const std::string& to_ip, size_t bytes) {
  Fd listener, conn;
  sockaddr_in addr{.sin_family = AF_INET, .sin_port = htons(kPort), .sin_addr = {}, .sin_zero = {}};
  if (inet_pton(AF_INET, to_ip.c_str(), &addr.sin_addr) != 1) {
    return ::testing::AssertionFailure() << "bad address " << to_ip;
  }
  {
    EnterNetns in(to);  // the socket belongs to the netns it is made in
    if (!in.ok()) return ::testing::AssertionFailure() << "enter " << to;
    listener = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const int one = 1;
    (void)::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener.get(), 1) != 0) {
      return ::testing::AssertionFailure() << "listen in " << to << ": " << strerror(errno);
    }
  }
  size_t received = 0;
  std::thread receiver([&] {
    Fd s(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    std::vector<char> buf(1 << 16);
    while (s.get() >= 0) {
      const ssize_t n = ::read(s.get(), buf.data(), buf.size());
      if (n <= 0) break;
      received += static_cast<size_t>(n);
    }
  });
  {
    EnterNetns in(from);
    if (in.ok()) conn = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  }
  bool sent_all = false;
  if (conn.get() >= 0 &&
      ::connect(conn.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::vector<char> chunk(1 << 16, 'x');
    size_t left = bytes;
    while (left > 0) {
      const ssize_t n = ::write(conn.get(), chunk.data(), std::min(left, chunk.size()));
      if (n <= 0) break;
      left -= static_cast<size_t>(n);
    }
    sent_all = left == 0;
    (void)::shutdown(conn.get(), SHUT_WR);
  } else {
    // Unblock the receiver's accept.
    (void)::shutdown(listener.get(), SHUT_RDWR);
  }
  receiver.join();
  if (!sent_all || received != bytes) {
    return ::testing::AssertionFailure() << "sent " << (sent_all ? bytes : 0) << ", received "
                                         << received << " from " << from << " to " << to_ip;
  }
  return ::testing::AssertionSuccess();
}

class TcpFallbackNetnsTest : public ::testing::Test {
 protected:
  struct Pod {
    std::string name{};
    int vf = 0;
    std::string ip{}, peer_ip{};
    std::unique_ptr<ScratchNetns> ns{};
    std::string rdma{};
  };

  void SetUp() override {
    if (!rdmanet::testing::isRoot()) GTEST_SKIP() << "netns test needs root";
    ASSERT_TRUE(peer_.ok());
    for (auto* p : {&rank0_, &rank1_, &idle_}) ASSERT_NO_FATAL_FAILURE(addPod(*p));
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(state_.path());
  }

  // The pod's eth1, a veth into the peer namespace, up and addressed; its attachment saved as
  // the CNI's ADD saves it; its RDMA device's traffic counters at 0.
  void addPod(Pod& p) {
    p.ns = std::make_unique<ScratchNetns>();
    ASSERT_TRUE(p.ns->ok());
    const std::string n = p.ns->name(), peer_if = "pr" + std::to_string(p.vf);
    std::string err;
    ASSERT_TRUE(ip({"-n", n, "link", "add", "eth1", "type", "veth", "peer", "name", peer_if}, &err))
        << err;
    ASSERT_TRUE(ip({"-n", n, "link", "set", peer_if, "netns", peer_.name()}, &err)) << err;
    ASSERT_TRUE(ip({"-n", n, "addr", "add", p.ip + "/24", "dev", "eth1"}, &err)) << err;
    ASSERT_TRUE(ip({"-n", peer_.name(), "addr", "add", p.peer_ip + "/24", "dev", peer_if}, &err))
        << err;
    ASSERT_TRUE(ip({"-n", n, "link", "set", "eth1", "up"}, &err)) << err;
    ASSERT_TRUE(ip({"-n", peer_.name(), "link", "set", peer_if, "up"}, &err)) << err;

    std::string netdev;
    for (const auto& d : node_.built().netdevs) {
      if (d.pci == node_.vf(0, p.vf)) {
        netdev = d.name;
        p.rdma = d.rdma;
      }
    }
    ASSERT_FALSE(p.rdma.empty()) << "VF " << p.vf << " has no RDMA device in the simulated node";
    auto st = testing::cniSriov("c-" + p.name, p.name,
                                {.pci = node_.vf(0, p.vf).str(),
                                 .netdev = netdev,
                                 .pf = node_.pfNetdev(0),
                                 .pf_pci = node_.pf(0).str(),
                                 .index = p.vf});
    st.ifname = "eth1";
    st.netns = p.ns->path();
    ASSERT_TRUE(store_.save(st).ok());
    setRdmaWords(p, 0);
  }
  // The RDMA device's IB PMA data counters (4-byte words), both directions.
  void setRdmaWords(const Pod& p, uint64_t words) {
    for (const char* c : {"port_xmit_data", "port_rcv_data"}) {
      node_.tree().writeAttr(
          "/sys/class/infiniband/" + p.rdma + "/ports/1/counters/" + std::string(c),
          std::to_string(words));
    }
  }
  // One interval of a training step: rank-1 over TCP only, rank-0 over TCP and RDMA.
  void trainingStep() {
    EXPECT_TRUE(sendTcp(rank1_.ns->path(), peer_.path(), rank1_.peer_ip, kSent));
    EXPECT_TRUE(sendTcp(rank0_.ns->path(), peer_.path(), rank0_.peer_ip, kSent));
    rdma_words_ += 50'000'000;
    setRdmaWords(rank0_, rdma_words_);
  }
  int runDoctor(const std::vector<std::string>& extra, std::string& out) {
    std::ostringstream o, e;
    doctor::PodsCliDeps deps = doctor::hostPodsCliDeps(&e);
    deps.wait = [this](int) { trainingStep(); };
    std::vector<std::string> args = {"--interval",      "1",
                                     "--cni-state-dir", state_.path().string(),
                                     "--sysfs-root",    node_.root().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const int rc = doctor::runPodsCli(args, deps, o, e);
    out = o.str();
    EXPECT_EQ(e.str().find("netns"), std::string::npos) << e.str();
    return rc;
  }

  dp::testing::TestNode node_;
  ScratchNetns peer_;
  sim::TempDir state_{"rdmanet-fallback"};
  cni::StateStore store_{state_.path()};
  Pod rank0_{.name = "rank-0", .vf = 1, .ip = "10.231.1.1", .peer_ip = "10.231.1.2"};
  Pod rank1_{.name = "rank-1", .vf = 2, .ip = "10.231.2.1", .peer_ip = "10.231.2.2"};
  Pod idle_{.name = "idle", .vf = 3, .ip = "10.231.3.1", .peer_ip = "10.231.3.2"};
  uint64_t rdma_words_ = 0;
};

// The value of the sample `name{labels...}` in `text`, whose labels start with `prefix`.
std::optional<uint64_t> sample(const std::string& text, const std::string& name,
                               const std::string& prefix) {
  const std::string head = "\n" + name + "{" + prefix;
  const size_t at = text.find(head);
  if (at == std::string::npos) return std::nullopt;
  const size_t sp = text.find("} ", at);
  const size_t nl = text.find('\n', sp);
  return std::stoull(text.substr(sp + 2, nl - sp - 2));
}

TEST_F(TcpFallbackNetnsTest, ThePodSeriesCountEth1sTcpBytesUnderThePodsLabels) {
  const auto seams = openPodSeams(node_.root(), [](const std::string&) {});
  PodMetrics metrics({.state_dir = state_.path()}, seams.deps());
  const std::string labels = "namespace=\"ml\",pod=\"rank-1\",interface=\"eth1\",device=\"" +
                             node_.vf(0, rank1_.vf).str() + "\",rdma_device=\"" + rank1_.rdma +
                             "\",mode=\"sriov\"";
  const std::string before = metrics.render();
  const auto tx0 = sample(before, "rdmanet_pod_netdev_tx_bytes_total", labels);
  ASSERT_TRUE(tx0) << before;
  trainingStep();
  const std::string after = metrics.render();
  const auto tx1 = sample(after, "rdmanet_pod_netdev_tx_bytes_total", labels);
  ASSERT_TRUE(tx1) << after;
  // The payload plus its TCP/IP headers, counted by the pod's own kernel.
  EXPECT_GE(*tx1 - *tx0, kSent);
  EXPECT_LT(*tx1 - *tx0, kSent * 11 / 10);
  // The ACKs came back: received bytes moved too, far less.
  const auto rx0 = sample(before, "rdmanet_pod_netdev_rx_bytes_total", labels);
  const auto rx1 = sample(after, "rdmanet_pod_netdev_rx_bytes_total", labels);
  ASSERT_TRUE(rx0 && rx1);
  EXPECT_GT(*rx1, *rx0);
  // Its RDMA bytes, under the same pod labels, stood still; rank-0's moved.
  EXPECT_NE(after.find("\nrdmanet_pod_rdma_tx_bytes_total{" + labels +
                       ",port=\"1\",counter=\"port_xmit_data\"} 0\n"),
            std::string::npos)
      << after;
  EXPECT_NE(after.find("\nrdmanet_pod_rdma_tx_bytes_total{namespace=\"ml\",pod=\"rank-0\""),
            std::string::npos);
  EXPECT_NE(after.find("\nrdmanet_pod_netns_read_errors 0\n"), std::string::npos) << after;
}

TEST_F(TcpFallbackNetnsTest, DoctorPodsNamesThePodThatFellBackAndOnlyIt) {
  std::string out;
  EXPECT_EQ(runDoctor({"--json"}, out), 1) << out;
  const auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["pods"].size(), 3u) << out;
  // Worst first: rank-1 alone fails.
  const auto& bad = j["pods"][0];
  EXPECT_EQ(bad["pod"], "ml/rank-1");
  EXPECT_EQ(bad["verdict"], "FAIL");
  EXPECT_EQ(bad["rdma_bytes_per_s"], 0.0);
  EXPECT_GE(bad["netdev_bytes_per_s"].get<double>(), static_cast<double>(kSent));
  EXPECT_TRUE(std::regex_search(
      bad["summary"].get<std::string>(),
      std::regex("^pod ml/rank-1: moved [0-9.]+ MB over eth1 and 0 B over RDMA \\(" + rank1_.rdma +
                 "\\) in the last 1 s: the workload fell back to TCP$")))
      << bad["summary"];
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(j["pods"][i]["verdict"], "PASS") << j["pods"][i].dump();
  }
  // The table says the same to a person.
  EXPECT_EQ(runDoctor({}, out), 1);
  EXPECT_NE(out.find("FAIL     pod ml/rank-1: moved "), std::string::npos) << out;
  EXPECT_NE(out.find("-> the pod holds an RDMA device but its traffic goes through the kernel's"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("PASS     pod ml/rank-0: no loss"), std::string::npos) << out;
  EXPECT_NE(out.find("PASS     pod ml/idle: no loss"), std::string::npos) << out;
}

TEST_F(TcpFallbackNetnsTest, TheRealDaemonsMetricsCountRank1sTcpBytes) {
  const fs::path work = dp::testing::freshDir("fallback");
  dp::testing::FakeKubeletProc kubelet(work / "kubelet", work);
  dp::testing::PluginProc plugin(
      {"--kubelet-dir", (work / "kubelet").string(), "--sysfs-root", node_.root().string(),
       "--devinfo-dir", (work / "devinfo").string(), "--cni-state-dir", state_.path().string(),
       "--metrics-addr", "127.0.0.1:0", "--doctor-interval", "0", "--metrics-max-age", "0"},
      work);
  const int port = plugin.metricsPort();
  ASSERT_GT(port, 0) << plugin.log();
  const std::string labels = "namespace=\"ml\",pod=\"rank-1\",interface=\"eth1\",device=\"" +
                             node_.vf(0, rank1_.vf).str() + "\",rdma_device=\"" + rank1_.rdma +
                             "\",mode=\"sriov\"";
  auto scrape = [&] {
    auto [status, body] = dp::testing::httpGet(port, "/metrics");
    EXPECT_EQ(status, 200);
    return "\n" + body;
  };
  const auto tx0 = sample(scrape(), "rdmanet_pod_netdev_tx_bytes_total", labels);
  ASSERT_TRUE(tx0) << plugin.log();
  trainingStep();
  const std::string after = scrape();
  const auto tx1 = sample(after, "rdmanet_pod_netdev_tx_bytes_total", labels);
  ASSERT_TRUE(tx1) << after;
  EXPECT_GE(*tx1 - *tx0, kSent);
  EXPECT_NE(after.find("\nrdmanet_pod_rdma_tx_bytes_total{" + labels +
                       ",port=\"1\",counter=\"port_xmit_data\"} 0\n"),
            std::string::npos);
  EXPECT_NE(after.find("\nrdmanet_pod_netns_read_errors 0\n"), std::string::npos);
  plugin.child().signal(SIGTERM);
  EXPECT_EQ(plugin.child().wait(std::chrono::seconds(10)), 0) << plugin.log();
  if (!HasFailure()) fs::remove_all(work);
}

}  // namespace
}  // namespace rdmanet::podnet
