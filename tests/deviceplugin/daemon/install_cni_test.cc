// --install-cni's copy-then-rename into the host's CNI bin dir, on real files in a temp dir.
#include "deviceplugin/daemon/install_cni.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/os/atomic_file.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

class DpInstallCniTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(work_ / "image");
    fs::create_directories(work_ / "host");
    // Any ELF will do as the "CNI binary": this test executable.
    src_ = work_ / "image" / "rdmanet";
    fs::copy_file("/proc/self/exe", src_);
  }
  sim::TempDir tmp_{"dp-install"};
  const fs::path work_ = tmp_.path();
  fs::path src_;
};

TEST_F(DpInstallCniTest, InstallsAnIdenticalCopyWithMode0755AndNoTempFile) {
  ASSERT_TRUE(installCniBinary(src_, work_ / "host").ok());
  const fs::path dst = work_ / "host" / "rdmanet";
  EXPECT_EQ(sim::readFileText(dst), sim::readFileText(src_));
  struct stat st {};
  ASSERT_EQ(::stat(dst.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(sim::dirEntries(work_ / "host"), std::vector<std::string>{"rdmanet"});
}

TEST_F(DpInstallCniTest, UpgradeReplacesTheBinaryAsANewInode) {
  const fs::path dst = work_ / "host" / "rdmanet";
  spit(dst,
       "\x7f"
       "ELF old version");
  struct stat before {};
  ASSERT_EQ(::stat(dst.c_str(), &before), 0);
  ASSERT_TRUE(installCniBinary(src_, work_ / "host").ok());
  struct stat after {};
  ASSERT_EQ(::stat(dst.c_str(), &after), 0);
  // A rename, not a rewrite in place: a runtime exec'ing the old inode is unaffected.
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(sim::readFileText(dst), sim::readFileText(src_));
}

TEST_F(DpInstallCniTest, StaleOrPlantedTempFileIsReplacedNotFollowed) {
  const fs::path victim = work_ / "victim";
  spit(victim, "do not touch");
  fs::create_symlink(victim, atomicTempPath(work_ / "host" / "rdmanet"));
  ASSERT_TRUE(installCniBinary(src_, work_ / "host").ok());
  EXPECT_EQ(sim::readFileText(victim), "do not touch");
  EXPECT_EQ(sim::dirEntries(work_ / "host"), std::vector<std::string>{"rdmanet"});
}

TEST_F(DpInstallCniTest, TempFilesOfAKilledEarlierRunAreSwept) {
  // What an init container killed mid-copy leaves: a temp file with its PID that nobody holds.
  spit(work_ / "host" / "rdmanet.rdmanet-tmp.99999999",
       "\x7f"
       "ELF half");
  spit(work_ / "host" / "other-plugin", "not ours");
  ASSERT_TRUE(installCniBinary(src_, work_ / "host").ok());
  EXPECT_EQ(sim::dirEntries(work_ / "host"), (std::vector<std::string>{"other-plugin", "rdmanet"}));
}

TEST_F(DpInstallCniTest, FailedRenameRemovesTheTempFile) {
  // A non-empty directory where the binary goes: rename(2) fails after the copy.
  fs::create_directories(work_ / "host" / "rdmanet" / "x");
  auto st = installCniBinary(src_, work_ / "host");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kIoFailure);
  EXPECT_THAT(st.error().msg, HasSubstr("rename"));
  EXPECT_EQ(sim::dirEntries(work_ / "host"), std::vector<std::string>{"rdmanet"});
  EXPECT_TRUE(fs::is_directory(work_ / "host" / "rdmanet" / "x"));
}

TEST_F(DpInstallCniTest, MissingSourceIsNotFoundAndNamesThePath) {
  auto st = installCniBinary(work_ / "image" / "nope", work_ / "host");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_THAT(st.error().msg, HasSubstr("image/nope"));
  EXPECT_TRUE(sim::dirEntries(work_ / "host").empty());
}

TEST_F(DpInstallCniTest, RefusesASourceThatIsNotAnElfFile) {
  spit(src_, "#!/bin/sh\necho not a binary\n");
  auto st = installCniBinary(src_, work_ / "host");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidConfig);
  EXPECT_THAT(st.error().msg, HasSubstr("not an ELF"));
  EXPECT_TRUE(sim::dirEntries(work_ / "host").empty());

  fs::remove(src_);
  fs::create_directories(src_);
  st = installCniBinary(src_, work_ / "host");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().msg, HasSubstr("not a regular file"));
}

TEST_F(DpInstallCniTest, DestinationMustBeAnExistingDirectory) {
  auto st = installCniBinary(src_, work_ / "missing");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().msg, HasSubstr("missing"));
  spit(work_ / "file", "x");
  st = installCniBinary(src_, work_ / "file");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().msg, HasSubstr("is not a directory"));
}

TEST(DpExecutableDirTest, IsTheDirectoryOfProcSelfExe) {
  auto d = executableDir("ignored-when-proc-is-mounted");
  ASSERT_TRUE(d.ok()) << d.error().msg;
  EXPECT_EQ(*d, fs::read_symlink("/proc/self/exe").parent_path());
}

TEST(DpExecutableDirTest, WithoutProcFallsBackToAnAbsoluteArgv0) {
  // A chroot without /proc mounted (the manifest test runs the image's filesystem that way).
  auto d = executableDir("/usr/local/bin/../bin/rdmanet-device-plugin", "/nonexistent/exe");
  ASSERT_TRUE(d.ok()) << d.error().msg;
  EXPECT_EQ(*d, fs::path("/usr/local/bin"));
}

TEST(DpExecutableDirTest, WithoutProcARelativeArgv0IsAnError) {
  auto d = executableDir("rdmanet-device-plugin", "/nonexistent/exe");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ErrorCode::kIoFailure);
  EXPECT_THAT(d.error().msg, HasSubstr("not an absolute path"));
}

}  // namespace
}  // namespace rdmanet::dp
