// The real rdmanet-device-plugin's HTTP endpoint under slow-drip scrapers (issue 29): a node with
// 1016 pods, one per VF of the scaling node (mlx5 shape, tests/simnode/scale_shapes.h), whose
// /metrics reply is megabytes; 32 clients ask for it at once and read it a little at a time,
// steadily, so that a deadline per write never fires. Meanwhile kubelet's probes must still be
// answered, the daemon must not hold a reply per scraper, and every scraper must be cut off by
// the reply's total deadline.
//
// What it showed on the tree before (civetweb 1.15, 16 workers, a 1 s deadline per write): the
// 32 scrapers held every worker, and /healthz went unanswered (see the report of issue 29).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <mutex>
#include <thread>

#include "cni/state/state_store.h"
#include "common/base/fd.h"
#include "tests/deviceplugin/integration/harness.h"
#include "tests/deviceplugin/podnet/cni_state.h"
#include "tests/fakes/eventually.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet::dp::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

constexpr int kScrapers = 32;
constexpr int kProbes = 20;
// A scraper's receive buffer, set before connecting so the window stays small from the start.
constexpr int kScraperRcvBuf = 4096;
// What a scraper reads per turn, and how often: 160 KB/s, so a multi-megabyte reply takes tens
// of seconds, while the server's sends keep making progress (client behaviour, not a wait).
constexpr size_t kDripBytes = 16 * 1024;
constexpr auto kDripEvery = std::chrono::milliseconds(100);

// /proc/<pid>/status field in kB (VmRSS, VmHWM); 0 if unreadable.
long statusKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return 0;
}

void sendAll(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

// One GET on a fresh connection, read to the server's close or `limit`: {reply, time taken}.
std::pair<std::string, std::chrono::microseconds> timedGet(int port, const std::string& path,
                                                           std::chrono::milliseconds limit) {
  const auto start = steady_clock::now();
  Fd fd = connectLoopback(port);
  std::string reply;
  if (fd.get() >= 0) {
    sendAll(fd.get(), "GET " + path + " HTTP/1.1\r\nHost: t\r\n\r\n");
    char buf[4096];
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(start + limit -
                                                                              steady_clock::now());
      pollfd p{fd.get(), POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
  }
  return {reply,
          std::chrono::duration_cast<std::chrono::microseconds>(steady_clock::now() - start)};
}

// The scrapers: each sends its request, then one thread reads kDripBytes from each every
// kDripEvery until the server closes it (or the test ends).
class Drippers {
 public:
  struct Scraper {
    Fd fd;
    std::string head;  // the reply's first bytes: its status line
    size_t bytes = 0;
    bool closed = false;
    steady_clock::time_point closed_at{};
  };

  Drippers(int port, int n) : started_(steady_clock::now()) {
    for (int i = 0; i < n; ++i) {
      Scraper s;
      s.fd = connectLoopback(port, kScraperRcvBuf);
      if (s.fd.get() >= 0) sendAll(s.fd.get(), "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
      scrapers_.push_back(std::move(s));
    }
    thread_ = std::thread([this] { drip(); });
  }
  ~Drippers() {
    stop_ = true;
    thread_.join();
  }

  // A copy of every scraper's state (fds left out).
  std::vector<Scraper> snapshot() {
    std::lock_guard lk(mu_);
    std::vector<Scraper> out;
    for (const Scraper& s : scrapers_) {
      out.push_back({.fd = Fd(),
                     .head = s.head,
                     .bytes = s.bytes,
                     .closed = s.closed,
                     .closed_at = s.closed_at});
    }
    return out;
  }
  steady_clock::time_point started() const { return started_; }

 private:
  void drip() {
    std::vector<char> buf(kDripBytes);
    while (!stop_) {
      {
        std::lock_guard lk(mu_);
        for (Scraper& s : scrapers_) {
          if (s.closed || s.fd.get() < 0) continue;
          const ssize_t n = ::recv(s.fd.get(), buf.data(), buf.size(), MSG_DONTWAIT);
          if (n > 0) {
            if (s.head.size() < 64) {
              s.head.append(buf.data(), std::min<size_t>(static_cast<size_t>(n), 64));
            }
            s.bytes += static_cast<size_t>(n);
          } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            s.closed = true;
            s.closed_at = steady_clock::now();
          }
        }
      }
      std::this_thread::sleep_for(kDripEvery);
    }
  }

  const steady_clock::time_point started_;
  std::mutex mu_;
  std::vector<Scraper> scrapers_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class DpHttpHostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = freshDir("http");
    state_ = std::make_unique<cni::StateStore>(freshDir("http-state"));
    tree_ = &sim::sharedScaleTree(sim::ScaleShape::kMlx5, 127);
    attachOnePodPerVf();
  }
  void TearDown() override {
    if (plugin_) {
      plugin_->child().signal(SIGTERM);
      EXPECT_EQ(plugin_->child().wait(20s), 0) << plugin_->log();
    }
    if (HasFailure()) return;
    fs::remove_all(work_);
    fs::remove_all(state_->dir());
  }

  // 1016 sriov attachments, one per VF, as the CNI's ADD saves them.
  void attachOnePodPerVf() {
    auto netdevOf = [&](const PciAddress& pci) {
      for (const auto& n : tree_->built.netdevs) {
        if (n.pci == pci) return n.name;
      }
      return std::string();
    };
    int i = 0;
    for (const auto& nic : tree_->built.nics) {
      for (size_t pf = 0; pf < nic.pfs.size(); ++pf) {
        for (size_t vf = 0; vf < nic.vfs[pf].size(); ++vf, ++i) {
          const std::string cid = "c" + std::to_string(i);
          ASSERT_TRUE(state_
                          ->save(podnet::testing::cniSriov(cid, "pod-" + std::to_string(i),
                                                           {.pci = nic.vfs[pf][vf].str(),
                                                            .netdev = netdevOf(nic.vfs[pf][vf]),
                                                            .pf = netdevOf(nic.pfs[pf]),
                                                            .pf_pci = nic.pfs[pf].str(),
                                                            .index = static_cast<int>(vf)}))
                          .ok());
        }
      }
    }
    ASSERT_EQ(i, 1016);
  }

  void startPlugin() {
    plugin_ = std::make_unique<PluginProc>(
        std::vector<std::string>{
            "--kubelet-dir", (work_ / "kubelet").string(), "--sysfs-root", tree_->root().string(),
            "--devinfo-dir", (work_ / "devinfo").string(), "--cni-state-dir",
            state_->dir().string(), "--metrics-addr", "127.0.0.1:0", "--doctor-interval", "0"},
        work_);
    port_ = plugin_->metricsPort(30s);
    ASSERT_GT(port_, 0) << plugin_->log();
  }

  fs::path work_;
  std::unique_ptr<cni::StateStore> state_;
  const sim::ScaleTree* tree_ = nullptr;
  std::unique_ptr<PluginProc> plugin_;
  int port_ = 0;
};

TEST_F(DpHttpHostileTest, ProbesAreAnsweredWhileThirtyTwoSlowDripScrapersReadMetrics) {
  fs::create_directories(work_ / "kubelet");
  startPlugin();
  // One scrape on its own: the reply's size, and the daemon's memory once it has rendered one.
  auto [whole, took] = timedGet(port_, "/metrics", 60s);
  ASSERT_TRUE(whole.starts_with("HTTP/1.1 200")) << whole.substr(0, 200) << plugin_->log();
  ASSERT_NE(whole.find("rdmanet_pod_device_info{namespace=\"ml\",pod=\"pod-1015\""),
            std::string::npos);
  const size_t body = whole.size();
  whole.clear();
  whole.shrink_to_fit();
  const pid_t pid = plugin_->child().pid();
  const long hwm_warm = statusKb(pid, "VmHWM");

  Drippers drippers(port_, kScrapers);
  // Until at least 4 scrapers are being sent a 200 (each of them holds a connection the daemon
  // writes to): the render of 1016 pods can take seconds on a loaded machine.
  auto sending = [&] {
    int n = 0;
    for (const auto& s : drippers.snapshot()) n += s.head.starts_with("HTTP/1.1 200") ? 1 : 0;
    return n;
  };
  (void)rdmanet::testing::eventually([&] { return sending() >= 4; }, 60s, 50ms);
  ASSERT_GE(sending(), 4) << plugin_->log();

  std::vector<std::chrono::microseconds> probes;
  int answered = 0;
  for (int i = 0; i < kProbes; ++i) {
    auto [reply, t] = timedGet(port_, "/healthz", 3s);
    answered += reply.starts_with("HTTP/1.1 200") && reply.ends_with("ok\n") ? 1 : 0;
    probes.push_back(t);
  }
  const long hwm_attacked = statusKb(pid, "VmHWM");
  std::sort(probes.begin(), probes.end());
  auto ms = [](std::chrono::microseconds d) { return static_cast<double>(d.count()) / 1000; };
  // Every scraper's status line, as the drip thread has read it. It reads each socket once per
  // turn (100 ms), and on a loaded machine the daemon may have answered the first four before it
  // read the others' requests: the probes above can end inside one turn, before the 503s are
  // read. So the count waits for every scraper to have been answered (or dropped), not a clock.
  auto states = drippers.snapshot();
  (void)rdmanet::testing::eventually(
      [&] {
        states = drippers.snapshot();
        return std::all_of(states.begin(), states.end(),
                           [](const auto& s) { return s.head.size() >= 12 || s.closed; });
      },
      30s, 50ms);
  const int ok = static_cast<int>(std::count_if(states.begin(), states.end(), [](const auto& s) {
    return s.head.starts_with("HTTP/1.1 200");
  }));
  const int refused =
      static_cast<int>(std::count_if(states.begin(), states.end(), [](const auto& s) {
        return s.head.starts_with("HTTP/1.1 503");
      }));
  std::printf(
      "/metrics of 1016 pods: %zu bytes, %.0f ms alone; %d slow-drip scrapers (%zu B per %lld "
      "ms): %d sent a 200, %d refused 503\n/healthz x%d: %d answered, median %.2f ms, max %.2f "
      "ms\nVmHWM: %ld kB after one scrape, %ld kB under the scrapers (+%ld kB)\n",
      body, ms(took), kScrapers, kDripBytes, static_cast<long long>(kDripEvery.count()), ok,
      refused, kProbes, answered, ms(probes[probes.size() / 2]), ms(probes.back()), hwm_warm,
      hwm_attacked, hwm_attacked - hwm_warm);
  EXPECT_EQ(answered, kProbes);
  // Within kubelet's default probe timeout (timeoutSeconds: 1), with room to spare. How fast they
  // were is printed above, not asserted: a loaded CI runner stretches any clock.
  EXPECT_LT(probes.back(), 1s);
  // Memory: the scrapers share one render, so the daemon's peak grows by at most three bodies
  // over its peak after a scrape alone: the reply being sent, and a render being built, whose
  // text may briefly be twice its size while it grows. A render per scraper (what the worker
  // pool did) would be one per worker, 16 bodies and their rendering at once. And the peak stays
  // under the chart's memory limit (64 MiB), which is what gets the daemon killed.
  EXPECT_LT(static_cast<size_t>(hwm_attacked - hwm_warm) * 1024, 3 * body)
      << hwm_warm << " kB -> " << hwm_attacked << " kB";
  EXPECT_LT(hwm_attacked, 64 * 1024);
  // The cap: a few are sent the reply, the others are refused at once.
  EXPECT_LE(ok, 4);
  EXPECT_EQ(ok + refused, kScrapers);

  // Every reply has a total deadline (10 s from the request): however steadily a scraper reads,
  // it is cut off (reset), long before it could read its megabytes.
  (void)rdmanet::testing::eventually(
      [&] {
        states = drippers.snapshot();
        return std::all_of(states.begin(), states.end(), [](const auto& s) { return s.closed; });
      },
      std::chrono::duration_cast<std::chrono::milliseconds>(drippers.started() + 30s -
                                                            steady_clock::now()),
      100ms);
  for (const auto& s : drippers.snapshot()) {
    EXPECT_TRUE(s.closed) << "a scraper still connected 30 s on, " << s.bytes << " bytes read";
    if (s.closed && s.head.starts_with("HTTP/1.1 200")) {
      EXPECT_LT(s.bytes, body);
    }
  }
}

}  // namespace
}  // namespace rdmanet::dp::testing
