// A prepared-claims checkpoint that cannot be read
// (deviceplugin/dra/kubelet/checkpoint_recovery.h): the backup each rewrite keeps, the corrupt file
// moved aside and kept, and the fall-back to the API server when no good backup is left.
#include "deviceplugin/dra/kubelet/checkpoint_recovery.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;

PreparedClaim prepared(const std::string& uid) {
  return {.ref = {.ns = "team", .uid = uid, .name = "c-" + uid},
          .devices = {{.request_names = {"nic"},
                       .pool_name = "node-a",
                       .device_name = "pci-0000-17-00-2",
                       .cdi_device_ids = {"rdmanet.io/rdma=" + uid + "-pci-0000-17-00-2"}}}};
}

// The files in `dir` whose names start with `prefix`.
std::vector<fs::path> filesStarting(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path());
  }
  return out;
}

std::string contentOf(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

class CheckpointRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::makeTempDir("dra-ckpt-recovery"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file() const { return dir_ / "checkpoint.json"; }
  // Prepares u-1, then u-2: the backup then holds u-1 alone.
  void writeTwo() {
    ClaimCheckpoint c(file());
    ASSERT_TRUE(c.load().ok());
    ASSERT_TRUE(c.put(prepared("u-1")).ok());
    ASSERT_TRUE(c.put(prepared("u-2")).ok());
  }
  void corrupt(const fs::path& p, const std::string& with) {
    fs::remove(p);  // a new inode: the backup is another name of the old one
    std::ofstream(p, std::ios::binary) << with;
  }
  fs::path dir_;
};

TEST_F(CheckpointRecoveryTest, EachRewriteKeepsThePreviousGoodCheckpointAsTheBackup) {
  writeTwo();
  ClaimCheckpoint backup(dir_ / "backup-view.json");
  fs::copy_file(dir_ / "checkpoint.json.backup", dir_ / "backup-view.json");
  ASSERT_TRUE(backup.load().ok());
  EXPECT_EQ(backup.claims().size(), 1u);
  EXPECT_NE(backup.find("u-1"), nullptr);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "checkpoint.json.backup").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(filesStarting(dir_, "checkpoint.json.backup.rdmanet-tmp").empty());
}

// A write cut short after the backup step leaves the backup a second name of the file; the
// next rewrite's backup step must not leave its own temp name behind (found by dra_crash_test).
TEST_F(CheckpointRecoveryTest, ARewriteWhenTheBackupIsAlreadyTheFileLeavesNoTempName) {
  writeTwo();
  fs::remove(dir_ / "checkpoint.json.backup");
  fs::create_hard_link(file(), dir_ / "checkpoint.json.backup");
  ClaimCheckpoint c(file());
  ASSERT_TRUE(c.load().ok());
  ASSERT_TRUE(c.erase("u-2").ok());
  EXPECT_TRUE(filesStarting(dir_, "checkpoint.json.backup.rdmanet-tmp").empty());
  ClaimCheckpoint backup(dir_ / "checkpoint.json.backup");
  ASSERT_TRUE(backup.load().ok());
  EXPECT_EQ(backup.claims().size(), 2u) << "the backup is the checkpoint before the rewrite";
}

TEST_F(CheckpointRecoveryTest, AReadableCheckpointIsUsedAsItIs) {
  writeTwo();
  ClaimCheckpoint c(file());
  auto r = loadOrRecover(c);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->source, CheckpointRecovery::Source::kFile);
  EXPECT_EQ(r->note, "");
  EXPECT_EQ(c.claims().size(), 2u);
}

TEST_F(CheckpointRecoveryTest, ACorruptCheckpointIsMovedAsidePrivatelyAndTheBackupRestored) {
  writeTwo();
  corrupt(file(), "{\"version\": 1, \"claims\": {\"u-1\": ");
  ClaimCheckpoint c(file());
  auto r = loadOrRecover(c);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->source, CheckpointRecovery::Source::kBackup);
  EXPECT_NE(r->note.find("restored from the backup"), std::string::npos) << r->note;
  EXPECT_EQ(c.claims().size(), 1u);
  EXPECT_NE(c.find("u-1"), nullptr);
  // Kept for inspection, root's alone, named in the note.
  const auto aside = filesStarting(dir_, "checkpoint.json.corrupt-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(contentOf(aside[0]), "{\"version\": 1, \"claims\": {\"u-1\": ");
  struct stat st {};
  ASSERT_EQ(::stat(aside[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(r->note.find(aside[0].string()), std::string::npos) << r->note;
  // The restored checkpoint is a real one again: the next start reads it as it is.
  ClaimCheckpoint next(file());
  auto again = loadOrRecover(next);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->source, CheckpointRecovery::Source::kFile);
  EXPECT_EQ(next.claims().size(), 1u);
}

TEST_F(CheckpointRecoveryTest, WithoutABackupTheCheckpointIsLeftToBeRebuiltFromTheApi) {
  // Truncated by a torn write, zero bytes, binary garbage, and JSON of the wrong shape.
  for (const std::string& bad : {std::string("{\"version\": 1, \"cla"), std::string(),
                                 std::string("\x00\xff\xfe garbage \x01", 13),
                                 std::string("{\"version\": 1, \"claims\": {\"u\": {}}}")}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    writeTwo();
    fs::remove(dir_ / "checkpoint.json.backup");
    corrupt(file(), bad);
    ClaimCheckpoint c(file());
    auto r = loadOrRecover(c);
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ(r->source, CheckpointRecovery::Source::kApi);
    EXPECT_NE(r->note.find("no backup: rebuilding from the API server"), std::string::npos)
        << r->note;
    EXPECT_TRUE(c.claims().empty());
    EXPECT_FALSE(fs::exists(file()));
    EXPECT_EQ(filesStarting(dir_, "checkpoint.json.corrupt-").size(), 1u);
    for (const auto& f : filesStarting(dir_, "checkpoint.json")) fs::remove(f);
  }
}

TEST_F(CheckpointRecoveryTest, ACorruptBackupIsMovedAsideTooAndTheApiIsNext) {
  writeTwo();
  corrupt(file(), "garbage");
  corrupt(dir_ / "checkpoint.json.backup", "more garbage");
  ClaimCheckpoint c(file());
  auto r = loadOrRecover(c);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->source, CheckpointRecovery::Source::kApi);
  EXPECT_NE(r->note.find("the backup was unusable too"), std::string::npos) << r->note;
  EXPECT_EQ(filesStarting(dir_, "checkpoint.json.corrupt-").size(), 1u);
  EXPECT_EQ(filesStarting(dir_, "checkpoint.json.backup.corrupt-").size(), 1u);
  EXPECT_FALSE(fs::exists(dir_ / "checkpoint.json.backup"));
}

}  // namespace
}  // namespace rdmanet::dp
