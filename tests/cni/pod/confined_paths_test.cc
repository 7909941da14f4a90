// NAD authors get no root file operations (common/os/confined_path.h): the device-info file, the
// pod-info dir and the log file a network names stay beneath the node's roots for them
// (PluginDeps::node, the test's own dirs here), are never reached through a symlink, and are
// never opened in a way a FIFO could block.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/os/confined_path.h"
#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ConfinedPathsTest : public PluginTest {
 protected:
  void SetUp() override {
    fs::create_directories(devinfo());
    victim_ = tmp_.path() / "victim";
    std::ofstream(victim_) << "precious\n";
  }
  fs::path devinfo() const { return deps_->node.devinfo_root; }
  std::string withDevinfo(const fs::path& file) const {
    json c = json::parse(macvlanConf());
    c["runtimeConfig"]["CNIDeviceInfoFile"] = file.string();
    return c.dump();
  }
  fs::path victim_;
};

TEST_F(ConfinedPathsTest, ADeviceInfoFileOutsideTheDevinfoRootIsRefusedAndNotWritten) {
  const World before = world();
  const Invocation add = invoke("ADD", withDevinfo(victim_));
  ASSERT_EQ(add.exit_code, 1) << add.stdout_data;
  const json err = json::parse(add.stdout_data);
  EXPECT_EQ(err["code"], 7);
  EXPECT_NE(err["msg"].get<std::string>().find("CNIDeviceInfoFile"), std::string::npos);
  EXPECT_EQ(slurp(victim_), "precious\n");
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

TEST_F(ConfinedPathsTest, ADeviceInfoDirThroughASymlinkIsRefused) {
  const fs::path elsewhere = tmp_.path() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_symlink(elsewhere, devinfo() / "cni");
  const Invocation add = invoke("ADD", withDevinfo(devinfo() / "cni" / "x_net1"));
  ASSERT_EQ(add.exit_code, 1) << add.stdout_data;
  EXPECT_NE(add.stdout_data.find("symlink"), std::string::npos) << add.stdout_data;
  EXPECT_TRUE(fs::is_empty(elsewhere));
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());  // rolled back
}

// A state file naming a path outside the root (written by hand, or by an older version that
// accepted any path) and a DEL netconf naming one: DEL still finishes, and removes neither.
TEST_F(ConfinedPathsTest, DelNeverRemovesAFileOutsideTheDevinfoRoot) {
  ASSERT_EQ(invoke("ADD", withDevinfo(devinfo() / "cni" / "c1_net1")).exit_code, 0);
  EXPECT_TRUE(fs::exists(devinfo() / "cni" / "c1_net1"));
  const fs::path state = tmp_.path() / "state" / "c1_net1.json";
  json st = json::parse(slurp(state));
  st["deviceInfoFile"] = victim_.string();
  std::ofstream(state, std::ios::trunc) << st.dump();
  const Invocation del = invoke("DEL", withDevinfo(victim_));
  EXPECT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(slurp(victim_), "precious\n");
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());
}

TEST_F(ConfinedPathsTest, APodInfoDirOutsideItsRootOrThroughASymlinkIsRefused) {
  deps_->node.pod_info_root = (tmp_.path() / "run").string();
  const fs::path elsewhere = tmp_.path() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directories(tmp_.path() / "run");
  fs::create_symlink(elsewhere, tmp_.path() / "run" / "pod-info");
  for (const fs::path& dir : {fs::path("/etc/rdmanet-pod-info"), tmp_.path() / "run/pod-info"}) {
    const std::string conf = sriovConf(R"(, "podInfoDir": ")" + dir.string() + R"(")");
    const World before = world();
    const Invocation add = invoke("ADD", conf);
    ASSERT_EQ(add.exit_code, 1) << dir << ": " << add.stdout_data;
    EXPECT_EQ(world(), before) << dir << ": " << dumpWorld(world());
  }
  EXPECT_FALSE(fs::exists("/etc/rdmanet-pod-info"));
  EXPECT_TRUE(fs::is_empty(elsewhere));
  // Beneath the root, with its missing parents made: fine.
  const std::string ok =
      sriovConf(R"(, "podInfoDir": ")" + (tmp_.path() / "run/pi").string() + R"(")");
  EXPECT_EQ(invoke("ADD", ok).exit_code, 0);
  EXPECT_TRUE(fs::exists(tmp_.path() / "run/pi/0000:81:10.0/rdmanet.env"));
}

// --- The log file (Logger::setFile): the netconf's logFile, as runCni opens it. ---------------

class LogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_);
    std::ofstream(victim_) << "precious\n";
  }
  sim::TempDir tmp_{"rdmanet-logfile"};
  fs::path root_ = tmp_.path() / "log";
  fs::path victim_ = tmp_.path() / "victim";
};

TEST_F(LogFileTest, ASymlinkIsNeverFollowed) {
  fs::create_symlink(victim_, root_ / "cni.log");
  Logger log;
  const Status s = log.setFile(root_, (root_ / "cni.log").string(), 1 << 20);
  EXPECT_FALSE(s.ok());
  log.setSink(nullptr);
  log.info("hello");
  EXPECT_EQ(slurp(victim_), "precious\n");
}

// A FIFO used to hang every ADD in open(2): now the open does not block and is refused.
TEST_F(LogFileTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ / "cni.log").c_str(), 0600), 0);
  Logger log;
  const Status s = log.setFile(root_, (root_ / "cni.log").string(), 1 << 20);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().msg.find("cni.log"), std::string::npos) << s.error().msg;
}

TEST_F(LogFileTest, APathOutsideTheLogRootIsRefused) {
  Logger log;
  for (const std::string& p : {victim_.string(), (root_ / ".." / "victim").string(),
                               std::string("/etc/rdmanet-cni.log")}) {
    EXPECT_FALSE(log.setFile(root_, p, 1 << 20).ok()) << p;
  }
  EXPECT_FALSE(fs::exists("/etc/rdmanet-cni.log"));
  EXPECT_EQ(slurp(victim_), "precious\n");
}

TEST_F(LogFileTest, TheLogIsCappedAndCreatedPrivate) {
  const fs::path file = root_ / "sub" / "cni.log";
  fs::create_directories(file.parent_path());
  constexpr size_t kCap = 4096;
  for (int run = 0; run < 20; ++run) {
    Logger log;
    ASSERT_TRUE(log.setFile(root_, file.string(), kCap).ok());
    for (int i = 0; i < 100; ++i) log.info("line {} of run {}", i, run);
  }
  EXPECT_LE(fs::file_size(file), 2 * kCap);
  EXPECT_GT(fs::file_size(file), 0u);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// --- The primitive itself. ---------------------------------------------------------------------

TEST(ConfinedPath, IsBeneathIsLexicalAndStrict) {
  EXPECT_TRUE(isBeneath("/var/log", "/var/log/cni.log"));
  EXPECT_TRUE(isBeneath("/var/log/", "/var/log/a/b.log"));
  EXPECT_FALSE(isBeneath("/var/log", "/var/log"));
  EXPECT_TRUE(isBeneath("/var/log", "/var/log", true));
  EXPECT_FALSE(isBeneath("/var/log", "/var/logs/x"));
  EXPECT_FALSE(isBeneath("/var/log", "/var/log/../etc/passwd"));
  EXPECT_FALSE(isBeneath("/var/log", "/var/log/./x"));
  EXPECT_FALSE(isBeneath("/var/log", "/var/log//x"));
  EXPECT_FALSE(isBeneath("/var/log", "var/log/x"));
  EXPECT_FALSE(isBeneath("/var/log", std::string("/var/log/x\0y", 12)));
}

}  // namespace
}  // namespace rdmanet::cni::testing
