// The atomic file writer on real files in a temp dir: content, mode, replacement by rename, no
// temp file left on success or failure, planted symlinks, writers killed half-way and the sweep
// that cleans up after them.
#include "common/os/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/base/fd.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

mode_t modeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

class AtomicFileTest : public ::testing::Test {
 protected:
  sim::TempDir tmp_{"atomic-file"};
  const fs::path dir_ = tmp_.path();
};

TEST_F(AtomicFileTest, WritesTheContentWithTheWantedModeWhateverTheUmask) {
  const mode_t old = ::umask(0077);
  ASSERT_TRUE(writeFileAtomic(dir_ / "a", "hello", {.mode = 0644, .durable = true}).ok());
  ::umask(old);
  EXPECT_EQ(sim::readFileText(dir_ / "a"), "hello");
  EXPECT_EQ(modeOf(dir_ / "a"), 0644u);
  ASSERT_TRUE(writeFileAtomic(dir_ / "b", "x").ok());
  EXPECT_EQ(modeOf(dir_ / "b"), 0600u);  // the default
  EXPECT_EQ(sim::dirEntries(dir_), (std::vector<std::string>{"a", "b"}));
}

TEST_F(AtomicFileTest, ReplacesTheFileAsANewInode) {
  ASSERT_TRUE(writeFileAtomic(dir_ / "a", "old content").ok());
  struct stat before {};
  ASSERT_EQ(::stat((dir_ / "a").c_str(), &before), 0);
  ASSERT_TRUE(writeFileAtomic(dir_ / "a", "new").ok());
  struct stat after {};
  ASSERT_EQ(::stat((dir_ / "a").c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);  // a reader holding the old file keeps it whole
  EXPECT_EQ(sim::readFileText(dir_ / "a"), "new");
}

TEST_F(AtomicFileTest, APlantedSymlinkAtTheTempNameIsRemovedNotFollowed) {
  std::ofstream(dir_ / "victim") << "do not touch";
  fs::create_symlink(dir_ / "victim", atomicTempPath(dir_ / "a"));
  ASSERT_TRUE(writeFileAtomic(dir_ / "a", "content").ok());
  EXPECT_EQ(sim::readFileText(dir_ / "victim"), "do not touch");
  EXPECT_EQ(sim::readFileText(dir_ / "a"), "content");
  EXPECT_EQ(sim::dirEntries(dir_), (std::vector<std::string>{"a", "victim"}));
}

TEST_F(AtomicFileTest, AFailedRenameLeavesTheTargetAndNoTempFile) {
  fs::create_directories(dir_ / "a" / "x");  // rename(2) of a file over a non-empty dir fails
  auto st = writeFileAtomic(dir_ / "a", "content");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kIoFailure);
  EXPECT_THAT(st.error().msg, HasSubstr("rename"));
  EXPECT_EQ(sim::dirEntries(dir_), std::vector<std::string>{"a"});
  EXPECT_TRUE(fs::is_directory(dir_ / "a" / "x"));
}

TEST_F(AtomicFileTest, AFillErrorIsReturnedAsIsAndRemovesTheTempFile) {
  std::ofstream(dir_ / "a") << "kept";
  auto st = writeFileAtomicWith(dir_ / "a", [](int, const fs::path&) -> Status {
    return makeError(ErrorCode::kDeviceNotFound, "source vanished");
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_EQ(sim::readFileText(dir_ / "a"), "kept");
  EXPECT_EQ(sim::dirEntries(dir_), std::vector<std::string>{"a"});
}

TEST_F(AtomicFileTest, AMissingDirectoryIsAnErrorNamingThePath) {
  auto st = writeFileAtomic(dir_ / "no" / "a", "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kIoFailure);
  EXPECT_THAT(st.error().msg, HasSubstr((dir_ / "no").string()));
}

TEST_F(AtomicFileTest, AWriterKilledHalfWayLeavesATempFileThatTheSweepRemoves) {
  std::ofstream(dir_ / "a") << "before";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    (void)writeFileAtomicWith(dir_ / "a", [](int fd, const fs::path&) -> Status {
      (void)!::write(fd, "half", 4);
      ::kill(::getpid(), SIGKILL);
      return okStatus();
    });
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::string temp = "a.rdmanet-tmp." + std::to_string(child);
  EXPECT_EQ(sim::dirEntries(dir_), (std::vector<std::string>{"a", temp}));
  EXPECT_EQ(sim::readFileText(dir_ / "a"), "before");
  EXPECT_EQ(sweepAtomicTemps(dir_), 1);
  EXPECT_EQ(sim::dirEntries(dir_), std::vector<std::string>{"a"});
}

TEST_F(AtomicFileTest, TheSweepLeavesHeldTempsAndOtherFilesAlone) {
  std::ofstream(dir_ / "b.rdmanet-tmp.1") << "a live writer's";
  Fd held(::open((dir_ / "b.rdmanet-tmp.1").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(::flock(held.get(), LOCK_EX), 0);
  for (const char* other : {"c.tmp", "c.rdmanet-tmp.", "c.rdmanet-tmp.12x", "plain"}) {
    std::ofstream(dir_ / other) << "not ours";
  }
  EXPECT_EQ(sweepAtomicTemps(dir_), 0);
  EXPECT_EQ(sim::dirEntries(dir_).size(), 5u);
  held = Fd();  // the writer is gone
  EXPECT_EQ(sweepAtomicTemps(dir_), 1);
  EXPECT_FALSE(fs::exists(dir_ / "b.rdmanet-tmp.1"));
  EXPECT_EQ(sweepAtomicTemps(dir_ / "missing"), 0);
}

TEST_F(AtomicFileTest, ThreadsWritingOneFileNeverMixTheirContent) {
  const std::string a(100000, 'a'), b(100000, 'b');
  auto writer = [&](const std::string& content) {
    for (int i = 0; i < 100; ++i)
      ASSERT_TRUE(writeFileAtomic(dir_ / "f", content, {.durable = false}).ok());
  };
  std::thread t1(writer, a), t2(writer, b);
  t1.join();
  t2.join();
  const std::string got = sim::readFileText(dir_ / "f");
  EXPECT_TRUE(got == a || got == b);
  EXPECT_EQ(sim::dirEntries(dir_), std::vector<std::string>{"f"});
}

TEST(AtomicTempNameTest, RecognisesOnlyItsOwnPattern) {
  EXPECT_TRUE(isAtomicTempName("x_eth1.json.rdmanet-tmp.123"));
  EXPECT_EQ(atomicTempPath("/d/x.json"),
            fs::path("/d/x.json.rdmanet-tmp." + std::to_string(::getpid())));
  EXPECT_TRUE(isAtomicTempName(atomicTempPath("x").filename().string()));
  for (const char* name : {"x.json", "x.json.tmp", ".rdmanet-tmp.1", "x.rdmanet-tmp.",
                           "x.rdmanet-tmp.1a", "x.rdmanet-tmp.-1"}) {
    EXPECT_FALSE(isAtomicTempName(name)) << name;
  }
}

}  // namespace
}  // namespace rdmanet
