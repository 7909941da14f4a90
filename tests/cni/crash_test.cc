// Crash safety (label netns): the real binary is SIGKILLed on entry to each state-changing
// syscall of a normal ADD and of a normal DEL, one kill point per run (strace's syscall
// injection). After every kill, a DEL, then a fresh ADD and DEL, must leave nothing: no link in
// the pod or the host, no host-local lease, no state, lock, temp or device-info file.
//
// The kill points come from an strace of the same invocation run normally: every write, every
// openat that creates, mkdir, rename, fchmod, flock, unlink, ftruncate, netlink sendmsg, setns
// and clone (the IPAM delegate's start). Each run starts from the same empty state and IPAM
// directories, so the N-th call of a syscall is the same call in every run. The delegate (a
// separate program) is not traced: its own crashes are host-local's business.
#include <fmt/format.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "tests/cni/netns_fixture.h"

namespace rdmanet::cni::testing {
namespace {

struct KillPoint {
  std::string syscall;
  int when = 0;      // the when-th call of `syscall`
  std::string call;  // as strace printed it, for messages
};

const std::set<std::string> kStateChanging = {"write",   "openat", "mkdir",  "rename",
                                              "fchmod",  "flock",  "unlink", "ftruncate",
                                              "sendmsg", "setns",  "clone"};

std::vector<KillPoint> killPointsOf(const std::string& trace_file) {
  std::vector<KillPoint> out;
  std::map<std::string, int> seen;
  std::ifstream in(trace_file);
  for (std::string line; std::getline(in, line);) {
    const size_t paren = line.find('(');
    if (paren == std::string::npos || line[0] == '-' || line[0] == '+') continue;
    const std::string name = line.substr(0, paren);
    const int n = ++seen[name];
    if (!kStateChanging.count(name)) continue;
    if (name == "openat" && line.find("O_CREAT") == std::string::npos) continue;
    out.push_back({name, n, line.substr(0, 100)});
  }
  return out;
}

class CrashTest : public NetnsTest {
 protected:
  void SetUp() override {
    NetnsTest::SetUp();
    if (IsSkipped()) return;
    if (sh("which strace") != 0) GTEST_SKIP() << "strace is not installed (hack/install-deps.sh)";
  }

  // Runs the binary under strace: `strace_args` either trace into a file or inject a kill.
  // Returns the shell's exit code (137 when the plugin was killed).
  int traced(const std::string& command, const std::string& conf, const std::string& cid,
             const std::string& strace_args) {
    const fs::path conf_file = tmp_.path() / "conf.json";
    std::ofstream(conf_file) << conf;
    const std::string cmd = fmt::format(
        "env CNI_COMMAND={} CNI_CONTAINERID={} CNI_NETNS={} CNI_IFNAME=net1 "
        "CNI_PATH={}:/usr/lib/cni RDMANET_STATE_DIR={} strace -qq {} {} <{}",
        command, cid, nsPath("a"), binaryDir(), state_dir(), strace_args, RDMANET_CNI_BINARY,
        conf_file.string());
    // strace ends the way its tracee did: by the same signal (the shell may exec it directly).
    const int status = std::system((cmd + " >/dev/null 2>&1").c_str());
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }

  // What the attachment left: files (leftovers()) plus links in the pod and on the host.
  std::vector<std::string> everythingLeft(const std::string& host_dev) const {
    std::vector<std::string> left = leftovers();
    if (sh("ip netns exec " + nsName("a") + " ip link show net1") == 0) left.push_back("pod net1");
    const std::string mv = shOut("ip -o link show type macvlan | grep '@" + master_ + ":'");
    if (!mv.empty()) left.push_back("host macvlan " + mv);
    if (!host_dev.empty() && sh("ip link show " + host_dev) != 0) {
      left.push_back(host_dev + " not back in the host");
    }
    return left;
  }

  void wipe() {
    std::error_code ec;
    fs::remove_all(state_dir(), ec);
    fs::remove_all(ipam_dir(), ec);
    fs::remove_all(devinfo_dir(), ec);
    writeNodeConf();
  }

  // One sweep: every kill point of `verb` (ADD, or DEL after a normal ADD). Returns the number
  // of kill points; failures are reported as they happen.
  int sweep(const std::string& verb, const std::string& conf, const std::string& host_dev) {
    wipe();
    const std::string trace = (tmp_.path() / "trace").string();
    if (verb == "DEL") {
      EXPECT_EQ(cni("ADD", conf, "a", "c0").exit_code, 0);
    }
    EXPECT_EQ(traced(verb, conf, "c0", "-o " + trace), 0) << verb << " under strace failed";
    const std::vector<KillPoint> points = killPointsOf(trace);
    EXPECT_FALSE(points.empty());
    EXPECT_EQ(cni("DEL", conf, "a", "c0").exit_code, 0);
    int leaks = 0;
    for (const KillPoint& p : points) {
      wipe();
      if (verb == "DEL") {
        EXPECT_EQ(cni("ADD", conf, "a", "c0").exit_code, 0);
      }
      const int rc =
          traced(verb, conf, "c0",
                 fmt::format("-o /dev/null -e inject={}:signal=KILL:when={}", p.syscall, p.when));
      EXPECT_EQ(rc, 128 + SIGKILL) << "not killed at " << p.call;
      const BinaryRun del = cni("DEL", conf, "a", "c0");
      EXPECT_EQ(del.exit_code, 0) << "DEL after a kill at " << p.call << ": " << del.out;
      const BinaryRun add = cni("ADD", conf, "a", "c1");
      EXPECT_EQ(add.exit_code, 0) << "ADD after a kill at " << p.call << ": " << add.out;
      const BinaryRun del2 = cni("DEL", conf, "a", "c1");
      EXPECT_EQ(del2.exit_code, 0) << del2.out;
      const std::vector<std::string> left = everythingLeft(host_dev);
      if (!left.empty()) {
        ++leaks;
        ADD_FAILURE() << verb << " killed at " << p.syscall << " #" << p.when << " (" << p.call
                      << ") left " << ::testing::PrintToString(left);
      }
    }
    std::printf("%s (%s): %zu kill points, %d leaks\n", verb.c_str(), mode_.c_str(), points.size(),
                leaks);
    leaks_ += leaks;
    return static_cast<int>(points.size());
  }

  std::string conf(const std::string& body) const {
    return R"({"cniVersion": "1.1.0", "name": "crashnet", "type": "rdmanet", )" + body +
           R"(, "ipam": {"type": "host-local", "subnet": "10.78.0.0/24", "dataDir": ")" +
           ipam_dir() + R"("}, "runtimeConfig": {"CNIDeviceInfoFile": ")" + devinfo_dir() +
           R"(/dev.json"}})";
  }

  std::string master_ = "-";
  std::string mode_;
  int leaks_ = 0;
};

TEST_F(CrashTest, AKillAtAnyStateChangingSyscallOfAddOrDelLeavesNothingAfterDel) {
  master_ = tag_ + "m";
  vethPair(master_, tag_ + "mp");
  const std::string h = tag_ + "h";
  vethPair(h, tag_ + "hp");
  int points = 0;
  mode_ = "macvlan";
  const std::string mconf = conf(R"("master": ")" + master_ + R"(", "mode": "bridge")");
  points += sweep("ADD", mconf, "");
  points += sweep("DEL", mconf, "");
  mode_ = "host-device";  // takes a device lock
  const std::string hconf = conf(R"("device": ")" + h + R"(")");
  points += sweep("ADD", hconf, h);
  points += sweep("DEL", hconf, h);
  std::printf("kill points covered: %d, leaks: %d\n", points, leaks_);
  RecordProperty("kill_points", points);
  RecordProperty("leaks", leaks_);
  EXPECT_EQ(leaks_, 0);
}

}  // namespace
}  // namespace rdmanet::cni::testing
