// The CNI's transient files (common/os/held_file.h): temp and lock files that exist only while
// their process holds them, and the sweeps of the store and the device-info directories that
// remove the ones whose process died. A "crashed" holder is a child process that takes the file
// and SIGKILLs itself, as the kernel would leave it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "cni/state/device_lock.h"
#include "cni/state/state_store.h"
#include "common/os/atomic_file.h"
#include "common/os/held_file.h"
#include "tests/fakes/stepping_clock.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni {
namespace {

namespace fs = std::filesystem;

// Takes `path` in a child process that then dies by SIGKILL, holding it.
void leaveBehindByACrash(const fs::path& path) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto h = holdFile(path, HoldMode::kCreateWait);
    if (h.ok() && h->held()) (void)::write(h->fd.get(), "partial", 7);
    ::raise(SIGKILL);
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE(fs::exists(path));
}

std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

class TransientFilesTest : public ::testing::Test {
 protected:
  sim::TempDir tmp_{"rdmanet-held"};
  fs::path dir() const { return tmp_.path(); }
  rdmanet::testing::SteppingClock clock_;  // a busy lock's waits end at once
};

TEST_F(TransientFilesTest, TheSweepRemovesTempFilesOfDeadWritersOnly) {
  leaveBehindByACrash(atomicTempPath(dir() / "c1_net1.json"));
  // A write in progress in this process (another open file description: flock conflicts).
  auto live =
      holdFile(atomicTempPath(dir() / "c2_net1.json").string() + "0", HoldMode::kCreateWait);
  ASSERT_TRUE(live.ok() && live->held());
  std::ofstream(dir() / "c3_net1.json") << "{}";       // a state file
  std::ofstream(dir() / "other.json.tmp.123") << "x";  // not one of ours
  EXPECT_EQ(sweepAtomicTemps(dir()), 1);
  EXPECT_EQ(namesIn(dir()), (std::vector<std::string>{
                                "c2_net1.json.rdmanet-tmp." + std::to_string(::getpid()) + "0",
                                "c3_net1.json", "other.json.tmp.123"}));
  live->fd = Fd();
  EXPECT_EQ(sweepAtomicTemps(dir()), 1);
  EXPECT_EQ(sweepAtomicTemps(dir() / "missing"), 0);
}

TEST_F(TransientFilesTest, AnAtomicWriteLeavesOnlyItsTargetAndTakesOverADeadWritersTempFile) {
  leaveBehindByACrash(atomicTempPath(dir() / "doc.json"));  // as if a process with our PID died
  ASSERT_TRUE(writeFileAtomic(dir() / "doc.json", "{\"a\":1}", kCniWrite).ok());
  EXPECT_EQ(namesIn(dir()), std::vector<std::string>{"doc.json"});
  std::ifstream in(dir() / "doc.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{\"a\":1}");
  EXPECT_EQ(fs::status(dir() / "doc.json").permissions() & fs::perms::mask,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(TransientFilesTest, ALockFileLastsAsLongAsItsHolder) {
  const fs::path p = dir() / "dev-x.lock";
  {
    auto lock = DeviceLock::acquire(p, std::chrono::milliseconds(10), clock_);
    ASSERT_TRUE(lock.ok());
    EXPECT_TRUE(fs::exists(p));
    EXPECT_EQ(sweepUnheld(dir(), isLockFileName), 0);  // held: kept
    // A second locker waits on it, and gets a fresh lock once the holder is gone.
    EXPECT_EQ(DeviceLock::acquire(p, std::chrono::milliseconds(20), clock_).error().code,
              ErrorCode::kTryAgainLater);
  }
  EXPECT_FALSE(fs::exists(p));
  leaveBehindByACrash(p);
  EXPECT_EQ(sweepAtomicTemps(dir()), 0);  // a lock is not a temp file
  EXPECT_EQ(sweepUnheld(dir(), isLockFileName), 1);
  EXPECT_FALSE(fs::exists(p));
}

TEST_F(TransientFilesTest, ALockerWhoseFileIsSweptUnderItTakesAFreshOne) {
  const fs::path p = dir() / "dev-y.lock";
  leaveBehindByACrash(p);
  // The sweep and a new locker race: whichever order, the locker ends up holding the file the
  // path names, and the next sweep leaves it alone.
  EXPECT_EQ(sweepUnheld(dir(), isLockFileName), 1);
  auto lock = DeviceLock::acquire(p, std::chrono::milliseconds(10), clock_);
  ASSERT_TRUE(lock.ok());
  EXPECT_EQ(sweepUnheld(dir(), isLockFileName), 0);
  EXPECT_TRUE(fs::exists(p));
}

TEST_F(TransientFilesTest, TheStoreSweepsEveryOneOfItsDirectories) {
  StateStore store(dir() / "state");
  ASSERT_TRUE(store.ensure().ok());
  leaveBehindByACrash(atomicTempPath(store.dir() / "c1_net1.json"));
  leaveBehindByACrash(atomicTempPath(store.dir() / "vlan/ens1f0.100.json"));
  leaveBehindByACrash(atomicTempPath(store.dir() / "ipam/host-local.json"));
  leaveBehindByACrash(store.lockPath("dev-0000_81_10.0"));
  EXPECT_EQ(store.sweepStale(), 4);
  for (const char* sub : {"", "vlan", "ipam", "locks"}) {
    EXPECT_TRUE(namesIn(store.dir() / sub).empty() || std::string(sub).empty()) << sub;
  }
  EXPECT_EQ(namesIn(store.dir()), (std::vector<std::string>{"ipam", "locks", "vlan"}));
}

}  // namespace
}  // namespace rdmanet::cni
