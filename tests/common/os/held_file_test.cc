// Held files on real files in a temp dir: each hold mode's answer when the file is free, held
// elsewhere or missing; what is planted at the path; and the sweep's choice of what to remove.
#include "common/os/held_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

namespace fs = std::filesystem;

class HeldFileTest : public ::testing::Test {
 protected:
  sim::TempDir tmp_{"held-file"};
  const fs::path dir_ = tmp_.path();
};

TEST_F(HeldFileTest, ATryOnAFileHeldElsewhereIsBusyAndSucceedsOnceItIsReleased) {
  auto first = holdFile(dir_ / "x.lock", HoldMode::kCreateTry);
  ASSERT_TRUE(first.ok() && first->held());
  // Another open file description: flock conflicts even within one process.
  auto second = holdFile(dir_ / "x.lock", HoldMode::kCreateTry);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->busy);
  EXPECT_FALSE(second->held());
  first->fd = Fd();
  auto third = holdFile(dir_ / "x.lock", HoldMode::kExistingTry);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->held());
}

TEST_F(HeldFileTest, AnExistingOnlyHoldOfAMissingFileIsGoneAndCreatesNothing) {
  auto h = holdFile(dir_ / "missing", HoldMode::kExistingTry);
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->gone);
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
}

TEST_F(HeldFileTest, ASymlinkPlantedWhereAFileIsCreatedIsRemovedNotFollowed) {
  std::ofstream(dir_ / "victim") << "precious";
  fs::create_symlink(dir_ / "victim", dir_ / "x.lock");
  auto h = holdFile(dir_ / "x.lock", HoldMode::kCreateTry);
  ASSERT_TRUE(h.ok() && h->held());
  EXPECT_FALSE(fs::is_symlink(dir_ / "x.lock"));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "x.lock"));
  std::ifstream in(dir_ / "victim");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
}

TEST_F(HeldFileTest, AFifoPlantedWhereAFileIsCreatedIsReplacedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "x.lock").c_str(), 0600), 0);
  auto h = holdFile(dir_ / "x.lock", HoldMode::kCreateWait);
  ASSERT_TRUE(h.ok() && h->held());
  EXPECT_TRUE(fs::is_regular_file(dir_ / "x.lock"));
}

TEST_F(HeldFileTest, TheSweepRemovesOnlyUnheldFilesWhoseNameItIsGiven) {
  for (const char* f : {"a.lock", "b.lock", "c.json"}) std::ofstream(dir_ / f) << "";
  auto held = holdFile(dir_ / "b.lock", HoldMode::kExistingTry);
  ASSERT_TRUE(held.ok() && held->held());
  auto isLock = [](std::string_view n) { return n.ends_with(".lock"); };
  EXPECT_EQ(sweepUnheld(dir_, isLock), 1);
  EXPECT_EQ(sim::dirEntries(dir_), (std::vector<std::string>{"b.lock", "c.json"}));
  held->fd = Fd();
  EXPECT_EQ(sweepUnheld(dir_, isLock), 1);
  EXPECT_EQ(sweepUnheld(dir_ / "missing", isLock), 0);
}

}  // namespace
}  // namespace rdmanet
