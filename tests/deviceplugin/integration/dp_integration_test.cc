// The real rdmanet-device-plugin against a simulated node tree and the fake kubelet, over real
// unix sockets: registration, ListAndWatch, Allocate, GetPreferredAllocation, kubelet restarts
// and refusals, hot reload, metrics, and bad input. No root needed: the node is a fake sysfs
// tree (health then comes from sysfs; link events are covered by dp_link_integration_test).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "tests/deviceplugin/integration/harness.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/eventually.h"

namespace rdmanet::dp::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class DpIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = freshDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    kubelet_dir_ = work_ / "kubelet";
  }
  void TearDown() override {
    kubelet_.reset();
    if (plugin_) {
      plugin_->child().signal(SIGTERM);
      EXPECT_EQ(plugin_->child().wait(10s), 0) << plugin_->log();
    }
    if (!HasFailure()) fs::remove_all(work_);
  }
  void startPlugin(const std::string& config = "", std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "--kubelet-dir", kubelet_dir_.string(), "--sysfs-root", node_.root().string(),
        "--devinfo-dir", (work_ / "devinfo").string(), "--metrics-addr", "127.0.0.1:0",
        // Each scrape sees the counters as they are now, not a render up to a second old.
        "--metrics-max-age", "0"};
    if (!config.empty()) {
      writeFile(work_ / "config.json", config);
      args.push_back("--config");
      args.push_back((work_ / "config.json").string());
    }
    args.insert(args.end(), extra.begin(), extra.end());
    plugin_ = std::make_unique<PluginProc>(args, work_);
  }
  void startKubelet(std::vector<std::string> extra = {}) {
    kubelet_ = std::make_unique<FakeKubeletProc>(kubelet_dir_, work_, extra);
  }
  std::string vf(int pf, int v) { return node_.vf(pf, v).str(); }
  Json lastDevices(const std::string& resource) {
    Json last;
    for (const auto& e : kubelet_->events()) {
      if (isEvent("devices", resource)(e)) last = e;
    }
    return last;
  }

  TestNode node_;
  fs::path work_, kubelet_dir_;
  std::unique_ptr<PluginProc> plugin_;
  std::unique_ptr<FakeKubeletProc> kubelet_;
};

TEST_F(DpIntegrationTest, RegistersEachPoolAndListsDevicesWithNuma) {
  startPlugin();
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("wait rdma/shared"));
  auto reg = kubelet_->waitEvent(isEvent("register", "rdma/vf"), 1s);
  ASSERT_TRUE(reg);
  EXPECT_EQ((*reg)["version"], "v1beta1");
  EXPECT_EQ((*reg)["endpoint"], "rdmanet-rdma-vf.sock");
  EXPECT_EQ((*reg)["preferred_allocation"], true);
  EXPECT_EQ((*reg)["accepted"], true);
  EXPECT_TRUE(fs::exists(kubelet_dir_ / "device-plugins" / "rdmanet-rdma-vf.sock"));

  Json devs = lastDevices("rdma/vf");
  ASSERT_EQ(devs["count"], 16);
  EXPECT_EQ(devs["healthy"], 16);
  std::map<std::string, Json> byId;
  for (const auto& d : devs["devices"]) byId[d["id"]] = d;
  EXPECT_EQ(byId[vf(0, 0)]["numa"], Json::array({0}));
  EXPECT_EQ(byId[vf(3, 3)]["numa"], Json::array({1}));
  EXPECT_EQ(lastDevices("rdma/shared")["count"], 4 * 100);
  ASSERT_TRUE(kubelet_->command("options rdma/vf"));
  auto opts = kubelet_->waitEvent(isEvent("options", "rdma/vf"), 1s);
  EXPECT_EQ((*opts)["get_preferred_allocation_available"], true);
  EXPECT_EQ((*opts)["pre_start_required"], false);
}

TEST_F(DpIntegrationTest, ExcludeTopologyOmitsNumaNodes) {
  startPlugin(R"({"resourceList": [{"resourceName": "flat", "excludeTopology": true,
                                     "selectors": {"pfNames": ["ens2f0"]}}]})");
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/flat")) << plugin_->log();
  Json devs = lastDevices("rdma/flat");
  ASSERT_EQ(devs["count"], 4);
  for (const auto& d : devs["devices"]) EXPECT_TRUE(d["numa"].empty()) << d;
}

TEST_F(DpIntegrationTest, AllocateAndPreferredAnswerOnTheRealSocket) {
  startPlugin(R"({"resourceList": [{"resourceName": "vf", "preferredAllocation": "pack",
                                     "lossless": {"priority": 3, "dscp": 26}}]})");
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("prefer rdma/vf 3 - " + vf(2, 1)));
  auto pref = kubelet_->waitEvent(isEvent("prefer", "rdma/vf"), 1s);
  EXPECT_EQ((*pref)["device_ids"], Json::array({vf(2, 1), vf(2, 0), vf(2, 2)}));

  ASSERT_TRUE(
      kubelet_->command(fmt::format("allocate rdma/vf {},{} {}", vf(0, 0), vf(0, 1), vf(3, 2))));
  auto alloc = kubelet_->waitEvent(isEvent("allocate", "rdma/vf"), 1s);
  ASSERT_TRUE(alloc);
  ASSERT_EQ((*alloc)["responses"].size(), 2u);
  const Json& c0 = (*alloc)["responses"][0];
  EXPECT_EQ(c0["envs"]["PCIDEVICE_RDMA_VF"], vf(0, 0) + "," + vf(0, 1));
  Json info = Json::parse(c0["envs"]["PCIDEVICE_RDMA_VF_INFO"].get<std::string>());
  EXPECT_TRUE(info.contains(vf(0, 0)) && info.contains(vf(0, 1)));
  EXPECT_EQ(c0["envs"]["NCCL_IB_TC"], "104");
  EXPECT_EQ(c0["envs"]["NCCL_IB_SL"], "3");
  EXPECT_THAT(c0["envs"]["NCCL_IB_HCA"].get<std::string>(), ::testing::StartsWith("=mlx5_"));
  EXPECT_EQ(c0["devices"].size(), 7u);  // 2 x (uverbs, umad, issm) + rdma_cm
  const Json& c1 = (*alloc)["responses"][1];
  EXPECT_EQ(c1["devices"].size(), 4u);
  EXPECT_TRUE(fs::exists(work_ / "devinfo" / ("rdma-vf-" + vf(3, 2) + "-device.json")));
}

TEST_F(DpIntegrationTest, GarbageAllocateIdsGetClearErrorsAndNoCrash) {
  startPlugin();
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();
  struct Case {
    std::string ids;
    std::string code;
  };
  for (const Case& c :
       {Case{"../../etc/passwd", "INVALID_ARGUMENT"},
        Case{std::string(80, 'x'), "INVALID_ARGUMENT"}, Case{"0000:ff:1f.7", "NOT_FOUND"},
        Case{vf(0, 0) + "," + vf(0, 0), "INVALID_ARGUMENT"}}) {
    size_t mark = kubelet_->mark();
    EXPECT_FALSE(kubelet_->command("allocate rdma/vf " + c.ids));
    auto ev = kubelet_->waitEvent(isEvent("allocate", "rdma/vf"), 1s, mark);
    ASSERT_TRUE(ev);
    EXPECT_EQ((*ev)["error"]["code"], c.code) << c.ids << ": " << *ev;
    EXPECT_FALSE((*ev)["error"]["message"].get<std::string>().empty());
  }
  EXPECT_TRUE(plugin_->child().running());
  EXPECT_TRUE(kubelet_->command("allocate rdma/vf " + vf(1, 1)));  // still serving
}

TEST_F(DpIntegrationTest, KubeletRestartIsFollowedByRegistrationWithinOneSecond) {
  startPlugin();
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("wait rdma/shared"));
  size_t mark = kubelet_->mark();
  ASSERT_TRUE(kubelet_->command("restart 300"));
  auto back = kubelet_->waitEvent(isEvent("listening"), 5s, mark);
  ASSERT_TRUE(back);
  for (const std::string r : {"rdma/vf", "rdma/shared"}) {
    auto reg = kubelet_->waitEvent(
        [&](const Json& e) { return isEvent("register", r)(e) && e["accepted"] == true; }, 5s,
        mark);
    ASSERT_TRUE(reg) << r << "\n" << plugin_->log();
    double ms = ((*reg)["t_ns"].get<int64_t>() - (*back)["t_ns"].get<int64_t>()) / 1e6;
    EXPECT_LT(ms, 1000) << r;
    RecordProperty("reregister_ms_" + r.substr(5), std::to_string(ms));
    EXPECT_TRUE(kubelet_->waitEvent(isEvent("devices", r), 5s, mark)) << r;
  }
  // The old stream may report once more as it ends: wait for the new stream's full list.
  ASSERT_TRUE(kubelet_->command("wait-healthy rdma/vf 16 16 5000"));
  EXPECT_TRUE(kubelet_->command("allocate rdma/vf 1")) << kubelet_->events().back() << "\n"
                                                       << plugin_->log();
}

TEST_F(DpIntegrationTest, PluginWaitsForAnAbsentKubelet) {
  startPlugin();
  ASSERT_TRUE(plugin_->logContains("waiting for kubelet"));
  int port = plugin_->metricsPort();
  // It keeps retrying (with backoff) rather than giving up: a few attempts, still running.
  const std::string tries =
      "rdmanet_dp_registrations_total{resource=\"rdma/vf\",result=\"unavailable\"} ";
  auto attempts = [&] {
    std::string body = httpGet(port, "/metrics").second;
    auto at = body.find(tries);
    return at == std::string::npos ? 0 : std::stoi(body.substr(at + tries.size()));
  };
  (void)rdmanet::testing::eventually([&] { return attempts() >= 4; }, 5s, 10ms);
  EXPECT_GE(attempts(), 4) << plugin_->log();
  EXPECT_TRUE(plugin_->child().running());
  EXPECT_EQ(httpGet(port, "/readyz").first, 503);
  EXPECT_EQ(httpGet(port, "/healthz").first, 200);
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/vf 3000")) << plugin_->log();
  (void)rdmanet::testing::eventually([&] { return httpGet(port, "/readyz").first == 200; }, 2s,
                                     20ms);
  EXPECT_EQ(httpGet(port, "/readyz").first, 200);
}

// /healthz follows the event loop, not the HTTP thread. The loop is blocked from outside the
// process: its config file is replaced by a FIFO nobody writes yet, so the reload that the
// rename triggers blocks in open(). /healthz must turn 503 within 10 s, and 200 again once the
// loop turns (a writer shows up with the config).
TEST_F(DpIntegrationTest, HealthzFailsWhileTheLoopIsBlockedAndRecovers) {
  const std::string config = R"({"resourceList": [{"resourceName": "vf"}]})";
  startPlugin(config);
  int port = plugin_->metricsPort();
  ASSERT_EQ(httpGet(port, "/healthz").first, 200);
  const fs::path fifo = work_ / "config.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::rename(fifo, work_ / "config.json");
  const auto blocked_at = std::chrono::steady_clock::now();
  std::pair<int, std::string> code;
  (void)rdmanet::testing::eventually(
      [&] {
        code = httpGet(port, "/healthz");
        return code.first != 200;
      },
      12s, 50ms);
  const auto noticed = std::chrono::steady_clock::now() - blocked_at;
  EXPECT_EQ(code.first, 503) << plugin_->log();
  EXPECT_THAT(code.second, HasSubstr("event loop stalled"));
  EXPECT_LT(noticed, 10s);
  RecordProperty(
      "healthz_stall_noticed_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(noticed).count()));
  EXPECT_EQ(httpGet(port, "/metrics").first, 200);  // the HTTP side itself still answers
  // Opening the FIFO for writing unblocks the loop's open(); it reads the config and turns.
  std::ofstream(work_ / "config.json") << config;
  (void)rdmanet::testing::eventually([&] { return httpGet(port, "/healthz").first == 200; }, 4s,
                                     20ms);
  EXPECT_EQ(httpGet(port, "/healthz").first, 200) << plugin_->log();
}

TEST_F(DpIntegrationTest, RefusedRegistrationIsRetriedWithoutCrashing) {
  startKubelet({"--refuse-registration"});
  startPlugin();
  auto refused = kubelet_->waitEvent(
      [](const Json& e) { return isEvent("register")(e) && e["accepted"] == false; }, 5s);
  ASSERT_TRUE(refused) << plugin_->log();
  EXPECT_THAT((*refused)["error"].get<std::string>(), HasSubstr("refused"));
  ASSERT_TRUE(plugin_->logContains("refused registration"));
  int port = plugin_->metricsPort();
  EXPECT_EQ(httpGet(port, "/readyz").first, 503);
  EXPECT_TRUE(plugin_->child().running());
  ASSERT_TRUE(kubelet_->command("refuse off"));
  ASSERT_TRUE(kubelet_->command("wait rdma/vf 10000")) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("wait rdma/shared 10000"));
  // The fake kubelet dials the plugin as soon as it accepts the registration; the plugin counts
  // the registration once the answer reaches it, which a loaded runner can put after the dial.
  const std::string ok_line =
      "rdmanet_dp_registrations_total{resource=\"rdma/vf\",result=\"ok\"} 1";
  (void)rdmanet::testing::eventually(
      [&] { return httpGet(port, "/metrics").second.find(ok_line) != std::string::npos; }, 5s,
      20ms);
  auto metrics = httpGet(port, "/metrics").second;
  EXPECT_THAT(metrics,
              HasSubstr("rdmanet_dp_registrations_total{resource=\"rdma/vf\",result=\"refused\"}"));
  EXPECT_THAT(metrics, HasSubstr(ok_line));
}

TEST_F(DpIntegrationTest, ConfigHotReloadKeepsUnchangedPoolSockets) {
  const std::string a = R"({"resourceName": "a", "selectors": {"pfNames": ["ens1f0"]}})";
  startPlugin(R"({"resourceList": [)" + a +
              R"(, {"resourceName": "b", "selectors": {"pfNames": ["ens2f0"]}}]})");
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/a")) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("wait rdma/b"));
  size_t mark = kubelet_->mark();
  writeFile(work_ / "config.json",
            R"({"resourceList": [)" + a +
                R"(, {"resourceName": "b", "selectors": {"pfNames": ["ens2f1#0-1"]}},
                     {"resourceName": "c", "selectors": {"pfNames": ["ens1f1"]}}]})");
  ASSERT_TRUE(kubelet_->waitEvent(isEvent("register", "rdma/c"), 5s, mark)) << plugin_->log();
  ASSERT_TRUE(kubelet_->waitEvent(isEvent("register", "rdma/b"), 5s, mark));
  ASSERT_TRUE(kubelet_->command("wait-healthy rdma/b 2 2"));
  // Pool a kept its socket and its stream: no re-registration, no stream end.
  for (size_t i = mark; i < kubelet_->events().size(); ++i) {
    const Json& e = kubelet_->events()[i];
    EXPECT_FALSE(isEvent("register", "rdma/a")(e)) << e;
    EXPECT_FALSE(isEvent("stream_end", "rdma/a")(e)) << e;
  }
  // A broken config is rejected and the running one kept.
  mark = kubelet_->mark();
  writeFile(work_ / "config.json", R"({"resourceList": [{"resourceName": "a", "bogus": 1}]})");
  ASSERT_TRUE(plugin_->logContains("config reload rejected"));
  EXPECT_THAT(plugin_->log(), HasSubstr("resourceList[0].bogus: unknown key"));
  EXPECT_TRUE(kubelet_->command("allocate rdma/c 1"));
  for (size_t i = mark; i < kubelet_->events().size(); ++i) {
    EXPECT_FALSE(isEvent("stream_end")(kubelet_->events()[i])) << kubelet_->events()[i];
  }
}

// SIGHUP reloads what inotify cannot see: here the config is a symlink into a directory the
// plugin does not watch, and the file it points to changes in place.
TEST_F(DpIntegrationTest, SighupReloadsAConfigChangeInotifyCannotSee) {
  const fs::path real = work_ / "elsewhere" / "config.json";
  const std::string a = R"({"resourceName": "a", "selectors": {"pfNames": ["ens1f0"]}})";
  fs::create_directories(real.parent_path());
  writeFile(real, R"({"resourceList": [)" + a + "]}");
  fs::create_symlink(real, work_ / "config.json");
  startPlugin("", {"--config", (work_ / "config.json").string()});
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/a")) << plugin_->log();
  size_t mark = kubelet_->mark();
  writeFile(real, R"({"resourceList": [)" + a +
                      R"(, {"resourceName": "c", "selectors": {"pfNames": ["ens1f1"]}}]})");
  EXPECT_FALSE(kubelet_->waitEvent(isEvent("register", "rdma/c"), 1500ms, mark))
      << "inotify saw a change in an unwatched directory?";
  plugin_->child().signal(SIGHUP);
  ASSERT_TRUE(plugin_->logContains("SIGHUP: reloading config"));
  ASSERT_TRUE(kubelet_->waitEvent(isEvent("register", "rdma/c"), 5s, mark)) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("wait rdma/c"));  // its device list has arrived
  EXPECT_TRUE(kubelet_->command("allocate rdma/c 1"));
  for (size_t i = mark; i < kubelet_->events().size(); ++i) {
    EXPECT_FALSE(isEvent("register", "rdma/a")(kubelet_->events()[i])) << "pool a re-registered";
  }
  EXPECT_TRUE(plugin_->child().running());
}

// Kubelet's device-plugins directory removed (a node reset, a kubelet reinstall) and made
// again: the plugin waits, then serves and registers every pool again.
TEST_F(DpIntegrationTest, TheKubeletDirVanishingAndComingBackIsFollowed) {
  startPlugin();
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();
  kubelet_.reset();
  // The plugin may be re-creating its sockets in there while it goes: retry until it is gone.
  std::error_code ec;
  (void)rdmanet::testing::eventually(
      [&] {
        fs::remove_all(kubelet_dir_ / "device-plugins", ec);
        return !fs::exists(kubelet_dir_ / "device-plugins");
      },
      1s, 10ms);
  ASSERT_FALSE(fs::exists(kubelet_dir_ / "device-plugins")) << ec.message();
  ASSERT_TRUE(plugin_->logContains("vanished; waiting for it to come back")) << plugin_->log();
  // Past the plugin's first re-watch attempt, which finds it still absent.
  ASSERT_TRUE(plugin_->logContains("still absent")) << plugin_->log();
  EXPECT_TRUE(plugin_->child().running());
  startKubelet();  // creates the directory and kubelet.sock
  ASSERT_TRUE(kubelet_->command("wait rdma/vf 5000")) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("wait rdma/shared 5000"));
  EXPECT_TRUE(kubelet_->command("allocate rdma/vf 1")) << kubelet_->events().back() << "\n"
                                                       << plugin_->log();
}

TEST_F(DpIntegrationTest, MetricsExposeDevicesAllocationsAndLatency) {
  startPlugin();
  startKubelet();
  ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();
  ASSERT_TRUE(kubelet_->command("allocate rdma/vf 2"));
  auto [status, body] = httpGet(plugin_->metricsPort(), "/metrics");
  EXPECT_EQ(status, 200);
  EXPECT_THAT(body, HasSubstr("rdmanet_dp_devices{resource=\"rdma/vf\",health=\"healthy\"} 16"));
  EXPECT_THAT(body, HasSubstr("rdmanet_dp_registered{resource=\"rdma/vf\"} 1"));
  EXPECT_THAT(body,
              HasSubstr("rdmanet_dp_allocations_total{resource=\"rdma/vf\",result=\"ok\"} 1"));
  EXPECT_THAT(body,
              HasSubstr("rdmanet_dp_allocate_duration_seconds_count{resource=\"rdma/vf\"} 1"));
  EXPECT_EQ(httpGet(plugin_->metricsPort(), "/nope").first, 404);
}

TEST_F(DpIntegrationTest, BadStartupInputExitsNonZeroNamingTheKey) {
  struct Case {
    std::vector<std::string> args;
    std::string config;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "{\"resourceList\": [", "not JSON"},
      {{},
       R"({"resourceList": [{"resourceName": "a", "selector": {}}]})",
       "resourceList[0].selector: unknown key"},
      {{},
       R"({"resourceList": [{"resourceName": "a", "selectors": {"pfNames": ["x#0-3"]}},
                                {"resourceName": "b", "selectors": {"pfNames": ["x#3"]}}]})",
       "resourceList[1].selectors: overlaps resourceList[0]"},
      {{"--log-level", "loud"}, "", "--log-level"},
      {{"--metrics-addr", "nowhere"}, "", "--metrics-addr"},
      {{"--frobnicate", "1"}, "", "--frobnicate: unknown flag"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    fs::path dir = work_ / fmt::format("case{}", i);
    fs::create_directories(dir);
    std::vector<std::string> args = {"--kubelet-dir",       kubelet_dir_.string(), "--sysfs-root",
                                     node_.root().string(), "--metrics-addr",      "127.0.0.1:0"};
    if (!cases[i].config.empty()) {
      writeFile(dir / "config.json", cases[i].config);
      args.push_back("--config");
      args.push_back((dir / "config.json").string());
    }
    args.insert(args.end(), cases[i].args.begin(), cases[i].args.end());
    PluginProc p(args, dir);
    EXPECT_EQ(p.child().wait(10s), 1) << p.log();
    EXPECT_THAT(p.log(), HasSubstr(cases[i].message));
  }
  EXPECT_FALSE(fs::exists(kubelet_dir_ / "device-plugins" / "rdmanet-rdma-vf.sock"));
}

}  // namespace
}  // namespace rdmanet::dp::testing
