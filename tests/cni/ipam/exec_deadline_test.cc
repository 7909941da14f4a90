// An IPAM delegate has a deadline (cni/ipam/ipam.h, ExecIpam): ADD holds the device lock while it
// runs, so one that never finishes must not hold the device, or the pod start, forever. Real
// processes: a delegate script that hangs, and one that started a child of its own.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "cni/ipam/ipam.h"
#include "tests/fakes/eventually.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;

// Gone, or a zombie nobody reaped yet (a grandchild re-parented to init): either way not running.
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

class ExecDeadlineTest : public ::testing::Test {
 protected:
  void script(const std::string& name, const std::string& body) {
    const fs::path p = tmp_.path() / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
  }
  ExecRequest request(const std::string& type) const {
    return {.type = type,
            .path = {tmp_.path().string()},
            .env = {{"CNI_COMMAND", "ADD"}, {"PIDDIR", tmp_.path().string()}},
            .stdin_data = R"({"cniVersion": "1.0.0"})"};
  }
  pid_t pidIn(const std::string& file) const {
    std::ifstream in(tmp_.path() / file);
    pid_t pid = 0;
    in >> pid;
    return pid;
  }
  sim::TempDir tmp_{"rdmanet-exec-deadline"};
  // Real time: what is under test is a real delegate process killed at its deadline.
  const SteadyClock clock_;
};

TEST_F(ExecDeadlineTest, ADelegatePastItsDeadlineIsKilledWithWhatItStarted) {
  script("hang", "sleep 1000 &\necho $! > \"$PIDDIR/child\"\necho $$ > \"$PIDDIR/self\"\nwait\n");
  ExecIpam exec(clock_, std::chrono::milliseconds(300));
  auto r = exec.exec(request("hang"));
  ASSERT_FALSE(r.ok()) << "the delegate was allowed to run on";
  EXPECT_EQ(r.error().code, ErrorCode::kTryAgainLater);
  EXPECT_NE(r.error().msg.find("did not finish within 300 ms"), std::string::npos) << r.error().msg;
  const pid_t self = pidIn("self"), child = pidIn("child");
  ASSERT_GT(self, 0);
  ASSERT_GT(child, 0);
  EXPECT_FALSE(running(self));
  // The grandchild is init's to reap: poll, with a deadline, until it no longer runs.
  EXPECT_TRUE(rdmanet::testing::eventually([&] { return !running(child); }));
}

// Stdout closed early, the process lingering: still bounded.
TEST_F(ExecDeadlineTest, ADelegateThatClosesStdoutButLingersIsKilledToo) {
  script("linger", "exec >&-\necho $$ > \"$PIDDIR/self\"\nexec sleep 1000\n");
  ExecIpam exec(clock_, std::chrono::milliseconds(300));
  auto r = exec.exec(request("linger"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTryAgainLater);
  EXPECT_FALSE(running(pidIn("self")));
}

TEST_F(ExecDeadlineTest, ADelegateThatFinishesInTimeIsAnsweredAsBefore) {
  script("quick", "cat >/dev/null\necho '{\"cniVersion\": \"1.0.0\", \"ips\": []}'\nexit 3\n");
  ExecIpam exec(clock_, std::chrono::milliseconds(5000));
  auto r = exec.exec(request("quick"));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_NE(r->stdout_data.find("\"ips\""), std::string::npos);
}

}  // namespace
}  // namespace rdmanet::cni::testing
