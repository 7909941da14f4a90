// The kubelet-dir watcher both fronts share, on its own: real inotify on per-test directories and
// a FakeClock for the re-watch. inotify queues an event before the syscall that caused it
// returns, so every onReadable() here sees what the test just did, without waiting.

#include "deviceplugin/front/kubelet_dir_watcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/fakes/fake_clock.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Kind = KubeletDirWatcher::Event::Kind;
using Event = KubeletDirWatcher::Event;

void touch(const fs::path& p) { std::ofstream(p) << ""; }

class KubeletDirWatcherTest : public ::testing::Test {
 protected:
  fs::path kubelet() const { return tmp_.path() / "device-plugins"; }
  fs::path ours() const { return tmp_.path() / "plugins" / "driver"; }

  sim::TempDir tmp_{"kubelet-dir-watcher"};
  testing::FakeClock clock_;
};

TEST_F(KubeletDirWatcherTest, StartMakesMissingDirectoriesAndWatchesThem) {
  KubeletDirWatcher w({{.path = kubelet()}, {.path = ours(), .ours = true}}, clock_);
  EXPECT_EQ(w.fd(), -1);
  ASSERT_TRUE(w.start().ok());
  EXPECT_GE(w.fd(), 0);
  EXPECT_TRUE(w.watching());
  EXPECT_TRUE(fs::is_directory(kubelet()));
  EXPECT_TRUE(fs::is_directory(ours()));
  EXPECT_FALSE(w.nextDeadline().has_value());
}

TEST_F(KubeletDirWatcherTest, AnEntryRemovedIsReportedWithItsDirectory) {
  KubeletDirWatcher w({{.path = kubelet()}, {.path = ours(), .ours = true}}, clock_);
  ASSERT_TRUE(w.start().ok());
  touch(ours() / "dra.sock");
  touch(kubelet() / "a.sock");
  EXPECT_THAT(w.onReadable(), ElementsAre(Event{Kind::kCreated, 1, "dra.sock"},
                                          Event{Kind::kCreated, 0, "a.sock"}));
  fs::remove(kubelet() / "a.sock");
  fs::rename(ours() / "dra.sock", tmp_.path() / "elsewhere");
  EXPECT_THAT(w.onReadable(), ElementsAre(Event{Kind::kRemoved, 0, "a.sock"},
                                          Event{Kind::kRemoved, 1, "dra.sock"}));
}

TEST_F(KubeletDirWatcherTest, ARemovalAlreadyUndoneIsNotReported) {
  KubeletDirWatcher w({{.path = kubelet()}}, clock_);
  ASSERT_TRUE(w.start().ok());
  touch(kubelet() / "kubelet.sock");
  (void)w.onReadable();
  fs::remove(kubelet() / "kubelet.sock");
  touch(kubelet() / "kubelet.sock");
  EXPECT_THAT(w.onReadable(), ElementsAre(Event{Kind::kCreated, 0, "kubelet.sock"}));
}

TEST_F(KubeletDirWatcherTest, AVanishedDirectoryIsWaitedForOnTheClockAndWatchedOnceBack) {
  KubeletDirWatcher w({{.path = kubelet()}}, clock_);
  ASSERT_TRUE(w.start().ok());
  touch(kubelet() / "a.sock");
  (void)w.onReadable();
  fs::remove_all(kubelet());
  // The entry's removal comes first; the vanish ends the list.
  EXPECT_THAT(w.onReadable(),
              ElementsAre(Event{Kind::kRemoved, 0, "a.sock"}, Event{Kind::kVanished, 0, ""}));
  EXPECT_FALSE(w.watching());
  ASSERT_EQ(w.nextDeadline(), clock_.now() + KubeletDirWatcher::kRewatch);
  EXPECT_FALSE(w.runTimers(clock_.now()));  // not yet time

  clock_.advance(KubeletDirWatcher::kRewatch);
  EXPECT_FALSE(w.runTimers(clock_.now()));  // still absent: look again later
  EXPECT_EQ(w.nextDeadline(), clock_.now() + KubeletDirWatcher::kRewatch);

  fs::create_directories(kubelet());
  clock_.advance(KubeletDirWatcher::kRewatch);
  EXPECT_TRUE(w.runTimers(clock_.now()));
  EXPECT_TRUE(w.watching());
  EXPECT_FALSE(w.nextDeadline().has_value());
  touch(kubelet() / "kubelet.sock");
  EXPECT_THAT(w.onReadable(), ElementsAre(Event{Kind::kCreated, 0, "kubelet.sock"}));
}

TEST_F(KubeletDirWatcherTest, OneDirectoryVanishingDropsEveryWatchUntilAllAreBack) {
  KubeletDirWatcher w({{.path = kubelet()}, {.path = ours(), .ours = true}}, clock_);
  ASSERT_TRUE(w.start().ok());
  fs::remove_all(kubelet());
  EXPECT_THAT(w.onReadable(), ElementsAre(Event{Kind::kVanished, 0, ""}));
  // The directory still there is not watched meanwhile: the front serves again in all of them.
  touch(ours() / "dra.sock");
  fs::remove(ours() / "dra.sock");
  EXPECT_THAT(w.onReadable(), IsEmpty());
  fs::create_directories(kubelet());
  clock_.advance(KubeletDirWatcher::kRewatch);
  EXPECT_TRUE(w.runTimers(clock_.now()));
}

TEST_F(KubeletDirWatcherTest, OurDirectoryIsMadeAgainOnceKubeletsIsBack) {
  KubeletDirWatcher w({{.path = kubelet()}, {.path = ours(), .ours = true}}, clock_);
  ASSERT_TRUE(w.start().ok());
  fs::remove_all(tmp_.path() / "plugins");
  fs::remove_all(kubelet());
  EXPECT_THAT(w.onReadable(), ElementsAre(Event{Kind::kVanished, 1, ""}));
  clock_.advance(KubeletDirWatcher::kRewatch);
  EXPECT_FALSE(w.runTimers(clock_.now()));
  EXPECT_FALSE(fs::exists(ours()));  // not before kubelet's: kubelet may be gone for good

  fs::create_directories(kubelet());
  clock_.advance(KubeletDirWatcher::kRewatch);
  EXPECT_TRUE(w.runTimers(clock_.now()));
  EXPECT_TRUE(fs::is_directory(ours()));
}

TEST_F(KubeletDirWatcherTest, ADirectoryThatCannotBeMadeAtStartIsWaitedFor) {
  // A file where the directory's parent should be: neither made nor watched.
  touch(tmp_.path() / "blocked");
  const fs::path dir = tmp_.path() / "blocked" / "device-plugins";
  KubeletDirWatcher w({{.path = dir}}, clock_);
  ASSERT_TRUE(w.start().ok());
  EXPECT_FALSE(w.watching());
  ASSERT_EQ(w.nextDeadline(), clock_.now() + KubeletDirWatcher::kRewatch);

  fs::remove(tmp_.path() / "blocked");
  fs::create_directories(dir);
  clock_.advance(KubeletDirWatcher::kRewatch);
  EXPECT_TRUE(w.runTimers(clock_.now()));
  EXPECT_TRUE(w.watching());
}

}  // namespace
}  // namespace rdmanet::dp
