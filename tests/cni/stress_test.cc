// Stress (label netns, root): 32 pods added and deleted concurrently on one master through the
// real binary, and 1000 sequential ADD/DEL cycles in-process over the real kernel, with no
// error and no leaked fd, link or state file.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "cni/plugin.h"
#include "common/net/libnl_netlink.h"
#include "tests/cni/cni_binary.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;

int openFds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

size_t attachmentFiles(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) n += e.path().extension() == ".json";
  return n;
}

class StressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "stress tests need root";
    tag_ = "s" + std::to_string(::getpid() % 100000);
    master_ = tag_ + "m";
    ASSERT_EQ(sh("ip link add " + master_ + " type veth peer name " + tag_ + "p"), 0);
    ASSERT_EQ(sh("ip link set " + master_ + " up && ip link set " + tag_ + "p up"), 0);
  }
  void TearDown() override {
    for (const auto& ns : netns_) sh("ip netns del " + ns);
    if (!master_.empty()) sh("ip link del " + master_);
  }
  std::string macvlanChildren() const {
    return shOut("ip -o link show type macvlan | grep '@" + master_ + ":'");
  }

  sim::TempDir tmp_{"rdmanet-stress"};
  std::string tag_, master_;
  std::vector<std::string> netns_;
};

TEST_F(StressTest, ThirtyTwoPodsConcurrentlyOnOneMaster) {
  constexpr int kPods = 32;
  for (int i = 0; i < kPods; ++i) {
    netns_.push_back("rdmanet-" + tag_ + "-" + std::to_string(i));
    ASSERT_EQ(sh("ip netns add " + netns_.back()), 0);
  }
  const std::string state = (tmp_.path() / "state").string();
  const std::string conf = R"({"cniVersion": "1.1.0", "name": "stress", "type": "rdmanet",
    "master": ")" + master_ +
                           R"(", "ipam": {"type": "host-local", "subnet": "10.66.0.0/24",
    "dataDir": ")" + (tmp_.path() / "ipam").string() +
                           R"("}})";
  auto runAll = [&](const std::string& cmd) {
    std::atomic<int> failures{0};
    std::vector<std::string> errors(kPods);
    std::vector<std::thread> threads;
    for (int i = 0; i < kPods; ++i) {
      threads.emplace_back([&, i] {
        const BinaryRun r = runRdmanet(cmd, conf,
                                       {{"CNI_CONTAINERID", "pod" + std::to_string(i)},
                                        {"CNI_NETNS", "/var/run/netns/" + netns_[i]},
                                        {"CNI_IFNAME", "net1"}},
                                       state);
        if (r.exit_code != 0) {
          ++failures;
          errors[i] = r.out;
        }
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& e : errors) EXPECT_TRUE(e.empty()) << cmd << ": " << e;
    return failures.load();
  };
  ASSERT_EQ(runAll("ADD"), 0);
  EXPECT_EQ(attachmentFiles(state), static_cast<size_t>(kPods));
  for (const auto& ns : netns_) EXPECT_EQ(sh("ip -n " + ns + " link show net1"), 0) << ns;
  ASSERT_EQ(runAll("DEL"), 0);
  EXPECT_EQ(attachmentFiles(state), 0u);
  EXPECT_EQ(macvlanChildren(), "");
  size_t leases = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(tmp_.path() / "ipam", ec)) {
    const std::string n = e.path().filename();
    leases += e.is_regular_file() && n != "lock" && n.rfind("last_reserved", 0) != 0;
  }
  EXPECT_EQ(leases, 0u);
}

TEST_F(StressTest, AThousandSequentialCyclesLeakNothing) {
  netns_.push_back("rdmanet-" + tag_ + "-seq");
  ASSERT_EQ(sh("ip netns add " + netns_.back()), 0);
  const std::string netns = "/var/run/netns/" + netns_.back();
  auto host = LibnlNetlink::open();
  ASSERT_TRUE(host.ok());
  SetnsRunner runner;
  const SteadyClock clock;
  ExecIpam ipam(clock);
  Logger log;
  log.setLevel(LogLevel::kWarn);
  PluginDeps deps{.host = **host,
                  .runner = runner,
                  .ipam = ipam,
                  .sysfs = Sysfs("/"),
                  .store = StateStore(tmp_.path() / "state"),
                  .log = log};
  const std::string conf = R"({"cniVersion": "1.1.0", "name": "seq", "type": "rdmanet",
    "master": ")" + master_ +
                           R"(", "mtu": 1400, "allowPodIPs": true,
    "runtimeConfig": {"ips": ["10.67.0.2/24"]}})";
  std::map<std::string, std::string> env = {{"CNI_CONTAINERID", "seq"},
                                            {"CNI_NETNS", netns},
                                            {"CNI_IFNAME", "net1"},
                                            {"CNI_PATH", "/usr/lib/cni"}};
  auto lookup = [&](const char* k) -> std::optional<std::string> {
    auto it = env.find(k);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  const int fds_before = openFds();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    env["CNI_COMMAND"] = "ADD";
    const Invocation add = runCni(deps, lookup, conf);
    ASSERT_EQ(add.exit_code, 0) << "cycle " << i << ": " << add.stdout_data;
    env["CNI_COMMAND"] = "DEL";
    const Invocation del = runCni(deps, lookup, conf);
    ASSERT_EQ(del.exit_code, 0) << "cycle " << i << ": " << del.stdout_data;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("1000 in-process ADD+DEL cycles: %.0f ms (%.2f ms per cycle)\n", ms, ms / 1000);
  EXPECT_EQ(openFds(), fds_before);
  // Only our master's links are counted: other tests add and remove host links in parallel.
  EXPECT_EQ(macvlanChildren(), "");
  EXPECT_EQ(shOut("ip -n " + netns_.back() + " -o link show | wc -l"), "1\n");  // lo only
  EXPECT_EQ(attachmentFiles(tmp_.path() / "state"), 0u);
}

}  // namespace
}  // namespace rdmanet::cni::testing
