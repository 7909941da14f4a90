// State store, device locks, rollback and the IPAM executor (real fork/exec of Debian's
// host-local and of test scripts), without a kernel.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "cni/conf/json_util.h"
#include "cni/ipam/ipam.h"
#include "cni/modes/rollback.h"
#include "cni/state/device_lock.h"
#include "cni/state/state_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/stepping_clock.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni {
namespace {

namespace fs = std::filesystem;

int modeOf(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 0777;
}

class StateTest : public ::testing::Test {
 protected:
  sim::TempDir tmp_{"rdmanet-state"};
  StateStore store_{tmp_.path() / "var/lib/cni/rdmanet"};
  // A lock's waits between tries end at once, moving it on (and recording them).
  rdmanet::testing::SteppingClock clock_;
};

TEST_F(StateTest, SavesAtomicallyWith0600FilesIn0700Dirs) {
  AttachmentState st;
  st.container_id = "c1";
  st.ifname = "net1";
  st.mode = Mode::kSriov;
  VfInfo vf;
  vf.index = 2;
  vf.vlan = 7;
  vf.qos = 3;
  vf.trust = true;
  st.orig_vf = vf;
  st.vf_knobs_set = {"vlan", "trust"};
  ASSERT_TRUE(store_.save(st).ok());
  EXPECT_EQ(modeOf(store_.dir()), 0700);
  EXPECT_EQ(modeOf(store_.dir() / "locks"), 0700);
  EXPECT_EQ(modeOf(store_.dir() / "c1_net1.json"), 0600);
  auto back = store_.load("c1", "net1");
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ((*back)->orig_vf, st.orig_vf);
  EXPECT_EQ((*back)->vf_knobs_set, st.vf_knobs_set);
  EXPECT_EQ((*back)->mode, Mode::kSriov);
  // No temp file is left next to it.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(store_.dir())) ++files;
  EXPECT_EQ(files, 4);  // the state file + locks, vlan, ipam
}

TEST_F(StateTest, RecordsThePodAndPriorityOfAnAttachmentForTheDaemonsPodMap) {
  CniEnv env;
  env.container_id = "c2";
  env.ifname = "net1";
  env.args.pod_namespace = "ml";
  env.args.pod_name = "trainer-3";
  env.args.pod_uid = "6f1c";
  NetConf conf;
  conf.raw = nlohmann::json::object();  // what parseNetConf leaves there
  conf.lossless = LosslessConf{.priority = 3};
  ASSERT_TRUE(store_.save(AttachmentState::forInvocation(env, conf)).ok());
  auto back = store_.load("c2", "net1");
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ((*back)->pod_namespace, "ml");
  EXPECT_EQ((*back)->pod_name, "trainer-3");
  EXPECT_EQ((*back)->pod_uid, "6f1c");
  EXPECT_EQ((*back)->priority, 3);
}

TEST_F(StateTest, ListsOneContainersAttachments) {
  auto save = [&](const std::string& cid, const std::string& ifname) {
    AttachmentState st;
    st.container_id = cid;
    st.ifname = ifname;
    st.mode = Mode::kHostDevice;
    ASSERT_TRUE(store_.save(st).ok());
  };
  save("c1", "net1");
  save("c1", "net2");
  save("c1_x", "net1");  // an id the prefix "c1_" also matches
  save("c2", "net1");
  std::ofstream(store_.dir() / "c9_net1.json") << "{not json";
  const auto got = store_.listContainer("c1");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ifname, "net1");
  EXPECT_EQ(got[1].ifname, "net2");
  EXPECT_TRUE(store_.listContainer("c3").empty());
  EXPECT_EQ(store_.list().size(), 4u);  // c9's corrupt file is skipped
}

TEST_F(StateTest, TightensAnExistingDirectoryTo0700) {
  fs::create_directories(store_.dir());
  fs::permissions(store_.dir(), fs::perms::all);
  ASSERT_TRUE(store_.ensure().ok());
  EXPECT_EQ(modeOf(store_.dir()), 0700);
}

TEST_F(StateTest, MissingStateIsNulloptAndRemoveIsIdempotent) {
  auto none = store_.load("c9", "net1");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_TRUE(store_.remove("c9", "net1").ok());
}

TEST_F(StateTest, ACorruptStateFileIsError5) {
  ASSERT_TRUE(store_.ensure().ok());
  std::ofstream(store_.dir() / "c1_net1.json") << "{not json";
  auto r = store_.load("c1", "net1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kIoFailure);
}

// A state file's numbers are read within their fields' ranges (the attachment-state fuzzer's
// finding): a float or an out-of-range value makes the file invalid, like a wrong type, instead of
// undefined behaviour or a silently wrapped VLAN that DEL would write back to the VF.
TEST_F(StateTest, ANumberOutOfItsFieldsRangeMakesTheStateFileInvalid) {
  ASSERT_TRUE(store_.ensure().ok());
  const std::string head = R"({"containerID": "c1", "ifname": "net1", "mode": "sriov", )";
  for (const std::string bad :
       {R"("origVf": {"index": 1, "proto": 3.49e124})", R"("origMtu": 6.7e123)",
        R"("origVf": {"index": 1, "vlan": 70000})", R"("origVf": {"index": 1, "link_state": 3})",
        R"("priority": 8)", R"("vfIndex": -2)", R"("addedNs": 1.5)",
        R"("device": {"podIfindex": 4294967296})"}) {
    std::ofstream(store_.dir() / "c1_net1.json", std::ios::trunc) << head << bad << "}";
    auto r = store_.load("c1", "net1");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kIoFailure) << bad;
    EXPECT_EQ(r.error().msg, "state file is invalid") << bad;
    bool torn = false;
    ASSERT_TRUE(store_.load("c1", "net1", &torn).ok()) << bad;
    EXPECT_TRUE(torn) << bad;
  }
  std::ofstream(store_.dir() / "c1_net1.json", std::ios::trunc)
      << head << R"("origVf": {"index": 3, "vlan": 4095, "qos": 7, "max_tx_rate": 4294967295}})";
  auto good = store_.load("c1", "net1");
  ASSERT_TRUE(good.ok() && good->has_value());
  ASSERT_TRUE((*good)->orig_vf.has_value());
  EXPECT_EQ((*good)->orig_vf->vlan, 4095);
  EXPECT_EQ((*good)->orig_vf->max_tx_rate, 4294967295u);
}

// What DEL and GC read instead (issue 29): a torn file is no state, reported as torn, and its
// name is listed so GC can release it.
TEST_F(StateTest, ATornStateFileIsNoStateWhenAskedAndListedByName) {
  ASSERT_TRUE(store_.ensure().ok());
  std::ofstream(store_.dir() / "c1_net1.json") << "";
  std::ofstream(store_.dir() / "c_2_net_2.json") << R"({"containerID": "c_2", "ifn)";
  AttachmentState whole;
  whole.container_id = "c3";
  whole.ifname = "net1";
  whole.mode = Mode::kHostDevice;
  ASSERT_TRUE(store_.save(whole).ok());
  bool torn = false;
  auto r = store_.load("c1", "net1", &torn);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_FALSE(r->has_value());
  EXPECT_TRUE(torn);
  ASSERT_TRUE(store_.load("c3", "net1", &torn).ok());
  EXPECT_FALSE(torn);
  std::vector<std::string> names;
  const auto listed = store_.list(&names);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].container_id, "c3");
  EXPECT_EQ(names, (std::vector<std::string>{"c1_net1", "c_2_net_2"}));
  ASSERT_TRUE(store_.removeTorn("c1_net1").ok());
  EXPECT_FALSE(fs::exists(store_.dir() / "c1_net1.json"));
}

// Files of older CNIs carry no device identity and no boot id; they read back as such, and a
// new record carries both through a save.
TEST_F(StateTest, TheDevicesIdentityAndTheBootRoundTripAndOlderFilesHaveNone) {
  ASSERT_TRUE(store_.ensure().ok());
  std::ofstream(store_.dir() / "old_net1.json")
      << R"({"containerID": "old", "ifname": "net1", "mode": "host-device", "pci": "0000:82:00.0"})";
  auto old = store_.load("old", "net1");
  ASSERT_TRUE(old.ok() && old->has_value());
  EXPECT_FALSE((*old)->has_identity);
  EXPECT_EQ((*old)->boot_id, "");
  AttachmentState st;
  st.container_id = "c1";
  st.ifname = "net1";
  st.mode = Mode::kSriov;
  st.has_identity = true;
  st.dev_parent = "0000:81:10.0";
  st.dev_perm_mac = MacAddress::parse("0c:42:a1:00:00:09").value();
  st.dev_kind = "";
  st.dev_pod_ifindex = 7;
  st.boot_id = "b1";
  st.added_ns = 42;
  ASSERT_TRUE(store_.save(st).ok());
  auto back = store_.load("c1", "net1");
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_TRUE((*back)->has_identity);
  EXPECT_EQ((*back)->dev_parent, st.dev_parent);
  EXPECT_EQ((*back)->dev_perm_mac, st.dev_perm_mac);
  EXPECT_EQ((*back)->dev_pod_ifindex, 7);
  EXPECT_EQ((*back)->boot_id, "b1");
  EXPECT_EQ((*back)->added_ns, 42);
}

TEST_F(StateTest, AnUnwritableStateDirIsError5) {
  std::ofstream(tmp_.path() / "file") << "x";
  StateStore bad(tmp_.path() / "file" / "sub");
  const Status s = bad.ensure();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kIoFailure);
}

TEST_F(StateTest, ABusyLockTimesOutWithCode11AndIsFreedWithItsHolder) {
  ASSERT_TRUE(store_.ensure().ok());
  const fs::path p = store_.lockPath(lockName("dev", "0000:81:10.2"));
  EXPECT_EQ(p.filename(), "dev-0000_81_10.2.lock");
  {
    auto held = DeviceLock::acquire(p, std::chrono::milliseconds(10), clock_);
    ASSERT_TRUE(held.ok());
    const auto t0 = clock_.now();
    auto busy = DeviceLock::acquire(p, std::chrono::milliseconds(150), clock_);
    ASSERT_FALSE(busy.ok());
    EXPECT_EQ(busy.error().code, ErrorCode::kTryAgainLater);
    // It tried for the whole timeout, backing off from 1 ms up to 20 ms between tries.
    EXPECT_GE(clock_.now() - t0, std::chrono::milliseconds(150));
    const auto waits = clock_.waits();
    ASSERT_GE(waits.size(), 6u);
    EXPECT_EQ(waits.front(), std::chrono::milliseconds(1));
    EXPECT_EQ(waits.back(), std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(DeviceLock::acquire(p, std::chrono::milliseconds(10), clock_).ok());
}

TEST_F(StateTest, AWaiterGetsTheLockWhenTheHolderReleasesIt) {
  ASSERT_TRUE(store_.ensure().ok());
  const fs::path p = store_.lockPath("x");
  rdmanet::testing::FakeClock clock;
  auto held = DeviceLock::acquire(p, std::chrono::milliseconds(10), clock);
  ASSERT_TRUE(held.ok());
  std::atomic<bool> got{false};
  std::thread waiter([&] { got = DeviceLock::acquire(p, std::chrono::seconds(3), clock).ok(); });
  // The waiter found the lock held and pauses on the clock before its next try.
  ASSERT_TRUE(clock.waitIdle());
  *held = DeviceLock();
  clock.advance(std::chrono::milliseconds(20));
  waiter.join();
  EXPECT_TRUE(got);
}

TEST(RollbackTest, RunsUndoStepsNewestFirstUnlessDismissed) {
  Logger log;
  std::vector<int> order;
  {
    Rollback rb(log);
    rb.push("one", [&] {
      order.push_back(1);
      return okStatus();
    });
    rb.push("two", [&] {
      order.push_back(2);
      return Status(makeError(ErrorCode::kNetlinkFailure, "stuck"));
    });
    rb.push("three", [&] {
      order.push_back(3);
      return okStatus();
    });
  }
  EXPECT_EQ(order, (std::vector<int>{3, 2, 1}));  // a failing step does not stop the rest
  order.clear();
  {
    Rollback rb(log);
    rb.push("one", [&] {
      order.push_back(1);
      return okStatus();
    });
    rb.dismiss();
  }
  EXPECT_TRUE(order.empty());
}

struct CountingExec : IpamExecutor {
  explicit CountingExec(IpamExecutor& inner) : inner(inner) {}
  Result<ExecOutput> exec(const ExecRequest& req) override {
    ++calls;
    return inner.exec(req);
  }
  IpamExecutor& inner;
  int calls = 0;
};

class ExecIpamTest : public ::testing::Test {
 protected:
  // A delegate script (the test's, not the plugin's: the plugin only ever execve()s files).
  void script(const std::string& name, const std::string& body) {
    const fs::path p = tmp_.path() / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
  }
  CniEnv env() const {
    CniEnv e;
    e.container_id = "c1";
    e.ifname = "net1";
    e.netns = "/var/run/netns/x";
    e.path = {"/nonexistent", tmp_.path().string()};
    return e;
  }
  sim::TempDir tmp_{"rdmanet-exec"};
  const SteadyClock clock_;  // real delegate processes
  ExecIpam exec_{clock_};
};

TEST_F(ExecIpamTest, PassesEnvAndStdinAndReadsStdout) {
  script("echo-ipam",
         "read -r line; printf '%s|%s|%s|%s' \"$CNI_COMMAND\" \"$CNI_CONTAINERID\" "
         "\"$CNI_IFNAME\" \"$line\"\n");
  auto r = exec_.exec(
      {.type = "echo-ipam",
       .path = env().path,
       .env = {{"CNI_COMMAND", "ADD"}, {"CNI_CONTAINERID", "c1"}, {"CNI_IFNAME", "net1"}},
       .stdin_data = "{\"a\":1}\n"});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->stdout_data, "ADD|c1|net1|{\"a\":1}");
}

TEST_F(ExecIpamTest, LargeStdinAndStdoutDoNotDeadlock) {
  script("cat-ipam", "exec cat\n");
  const std::string big(1 << 20, 'x');
  auto r = exec_.exec({.type = "cat-ipam", .path = env().path, .env = {}, .stdin_data = big});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_data.size(), big.size());
}

TEST_F(ExecIpamTest, ATypeNotInCniPathIs100AndNeverAPath) {
  auto r = exec_.exec({.type = "nope", .path = env().path});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeviceNotFound);
  script("x", "exit 0\n");
  EXPECT_FALSE(findInPath("../" + tmp_.path().filename().string() + "/x", {"/tmp"}).has_value());
  EXPECT_FALSE(findInPath(tmp_.path().string() + "/x", {"/"}).has_value());
  EXPECT_TRUE(findInPath("x", {tmp_.path().string()}).has_value());
  EXPECT_FALSE(findInPath("x", {"relative/dir"}).has_value());
}

TEST_F(ExecIpamTest, ADelegateErrorKeepsItsOwnCode) {
  script("fail-ipam",
         "echo '{\"code\": 11, \"msg\": \"pool exhausted\", \"details\": \"d\"}'; exit 1\n");
  CniEnv e = env();
  Ipam ipam(exec_, nullptr);
  auto r = ipam.run({.type = "fail-ipam",
                     .conf = json::object(),
                     .version = "1.0.0",
                     .env = &e,
                     .command = "ADD"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(static_cast<int>(r.error().code), 11);
  EXPECT_NE(r.error().msg.find("pool exhausted"), std::string::npos);
  EXPECT_EQ(r.error().details, "d");
}

TEST_F(ExecIpamTest, SpeaksTheHighestVersionDebiansHostLocalAcceptsAndCachesIt) {
  if (!fs::exists("/usr/lib/cni/host-local")) GTEST_SKIP() << "containernetworking-plugins missing";
  CniEnv e = env();
  e.path = {"/usr/lib/cni"};
  StateStore cache(tmp_.path() / "state");
  ASSERT_TRUE(cache.ensure().ok());
  const json conf = {{"cniVersion", "1.1.0"},
                     {"name", "t"},
                     {"type", "rdmanet"},
                     {"ipam",
                      {{"type", "host-local"},
                       {"subnet", "10.123.0.0/24"},
                       {"dataDir", (tmp_.path() / "ipam").string()}}}};
  Ipam ipam(exec_, &cache);
  std::string used;
  auto r = ipam.run(
      {.type = "host-local", .conf = conf, .version = "1.1.0", .env = &e, .command = "ADD"}, &used);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(used, "1.0.0");
  EXPECT_EQ(r->ips.at(0).address.str(), "10.123.0.2/24");
  auto cached = cache.readDoc("ipam/host-local.json");
  ASSERT_TRUE(cached.ok() && cached->has_value());
  EXPECT_EQ((**cached)["versions"]["1.1.0"], "1.0.0");
  // The second call goes straight to 1.0.0: one exec, no VERSION probe.
  CountingExec counting(exec_);
  Ipam again(counting, &cache);
  ASSERT_TRUE(
      again
          .run(
              {.type = "host-local", .conf = conf, .version = "1.1.0", .env = &e, .command = "DEL"})
          .ok());
  EXPECT_EQ(counting.calls, 1);
}

}  // namespace
}  // namespace rdmanet::cni
