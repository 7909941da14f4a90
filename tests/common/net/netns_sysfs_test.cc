// MountingNetnsSysfs against the real kernel: a throw-away namespace with a veth pair stands for
// a pod. Its sysfs view shows the pod's netdevs, a socket opened inside belongs to the pod, and
// no thread, fd or mount is left behind. Skips when not root.
#include "common/net/netns_sysfs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/net/ethtool_stats.h"
#include "tests/common/net/netns_helpers.h"

namespace rdmanet {
namespace {

using testing::ip;
using testing::isRoot;
using testing::ScratchNetns;

size_t entries(const char* dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

std::string slurp(const char* file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The sysfs mounts of our mount namespace, which is the host's: what the reader would leave
// behind is a sysfs mount. Other mounts come and go with the tests running beside this one
// (`ip netns add` mounts under /run/netns), so the whole table is not compared.
std::string sysfsMounts() {
  std::istringstream in(slurp("/proc/self/mountinfo"));
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find(" - sysfs ") != std::string::npos) out += line + "\n";
  }
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class NetnsSysfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!isRoot()) GTEST_SKIP() << "netns test needs root: it creates a network namespace";
    ns_ = std::make_unique<ScratchNetns>();
    ASSERT_TRUE(ns_->ok());
    std::string err;
    ASSERT_TRUE(
        ip({"-n", ns_->name(), "link", "add", "podeth0", "type", "veth", "peer", "name", "podeth1"},
           &err))
        << err;
  }
  std::unique_ptr<ScratchNetns> ns_;
  MountingNetnsSysfs reader_;
};

TEST_F(NetnsSysfsTest, ShowsThePodsNetdevsAndNotTheHosts) {
  std::vector<std::string> inside;
  ASSERT_TRUE(
      reader_.read(ns_->path(), [&](const Sysfs& s) { inside = s.list("/sys/class/net"); }).ok());
  EXPECT_TRUE(contains(inside, "podeth0"));
  EXPECT_TRUE(contains(inside, "lo"));
  const auto host = Sysfs("/").list("/sys/class/net");
  EXPECT_FALSE(contains(host, "podeth0"));
  for (const auto& name : host) {
    if (name == "lo") continue;
    EXPECT_FALSE(contains(inside, name)) << name << " is the host's";
  }
}

TEST_F(NetnsSysfsTest, ASocketOpenedInsideBelongsToThePod) {
  std::optional<Result<EthtoolStats>> inside;
  ASSERT_TRUE(reader_
                  .read(ns_->path(),
                        [&](const Sysfs&) {
                          auto e = IoctlEthtoolStats::open();
                          if (e.ok()) inside = (*e)->stats("podeth0");
                        })
                  .ok());
  ASSERT_TRUE(inside && inside->ok()) << (inside ? inside->error().msg : "not opened");
  EXPECT_TRUE(std::any_of((*inside)->begin(), (*inside)->end(),
                          [](const auto& kv) { return kv.first == "peer_ifindex"; }));
  auto host = IoctlEthtoolStats::open();
  ASSERT_TRUE(host.ok());
  EXPECT_EQ((*host)->stats("podeth0").error().sys_errno, ENODEV);
}

TEST_F(NetnsSysfsTest, LeavesNoThreadFdOrMountBehind) {
  const size_t fds = entries("/proc/self/fd"), tasks = entries("/proc/self/task");
  const std::string mounts = sysfsMounts();
  const std::string netns = std::filesystem::read_symlink("/proc/thread-self/ns/net");
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        reader_.read(ns_->path(), [](const Sysfs& s) { (void)s.list("/sys/class/net"); }).ok());
  }
  EXPECT_EQ(entries("/proc/self/fd"), fds);
  // join() returns once the thread has released its memory (the kernel clears its tid then);
  // the task itself is reaped a moment later, with its namespaces. Poll for that.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (entries("/proc/self/task") != tasks && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(entries("/proc/self/task"), tasks);
  EXPECT_EQ(sysfsMounts(), mounts);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/thread-self/ns/net"), netns);
}

TEST_F(NetnsSysfsTest, AMissingNamespaceIsError3AndRunsNothing) {
  bool ran = false;
  const Status st =
      reader_.read("/run/netns/rdmanet-no-such-ns", [&](const Sysfs&) { ran = true; });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kContainerUnknown);
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace rdmanet
