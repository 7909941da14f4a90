// The real rdmanet-device-plugin binary's follow-ups to the node doctor and the Helm chart:
//   - the daemon's periodic doctor on /metrics (--doctor-interval), against a simulated node;
//   - `rdmanet-device-plugin doctor ...` (and `doctor probe ...`, `doctor preflight ...`), which
//     must behave exactly like rdmanet-doctor;
//   - `--install-cni DIR`, the chart's init container, with the CNI binary next to it.
// The simulated nodes are the doctor's fake sysfs trees (no veths), so nothing here needs root.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/deviceplugin/doctor/doctor_node.h"
#include "tests/deviceplugin/doctor/run_command.h"
#include "tests/deviceplugin/integration/harness.h"
#include "tests/fakes/eventually.h"

namespace rdmanet::dp::testing {
namespace {

namespace fs = std::filesystem;
using doctor::testing::DoctorNode;
using ::testing::HasSubstr;
using ::testing::Not;

using ProcResult = doctor::testing::CommandResult;
using doctor::testing::runCommand;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class DpDoctorIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override { work_ = freshDir("doctor"); }
  void TearDown() override {
    if (plugin_) {
      plugin_->child().signal(SIGTERM);
      EXPECT_EQ(plugin_->child().wait(10s), 0) << plugin_->log();
    }
    if (!HasFailure()) fs::remove_all(work_);
  }
  // Starts the stand-in kubelet, then the plugin on `node` with /metrics on a free port;
  // returns that port. (The periodic doctor waits for every pool to register.)
  int startPlugin(const DoctorNode& node, const std::string& interval) {
    kubelet_ = std::make_unique<FakeKubeletProc>(work_ / "kubelet", work_);
    plugin_ = std::make_unique<PluginProc>(
        std::vector<std::string>{"--kubelet-dir", (work_ / "kubelet").string(), "--sysfs-root",
                                 node.root().string(), "--devinfo-dir",
                                 (work_ / "devinfo").string(), "--metrics-addr", "127.0.0.1:0",
                                 "--doctor-interval", interval},
        work_);
    return plugin_->metricsPort();
  }
  // Scrapes /metrics until it contains `want` (deadline, no fixed sleep); the last body.
  std::string scrapeUntil(int port, const std::string& want, std::chrono::milliseconds timeout) {
    std::string body;
    (void)rdmanet::testing::eventually(
        [&] {
          auto [status, b] = httpGet(port, "/metrics");
          body = b;
          return status == 200 && body.find(want) != std::string::npos;
        },
        timeout, 20ms);
    return body;
  }

  fs::path work_;
  std::unique_ptr<FakeKubeletProc> kubelet_;
  std::unique_ptr<PluginProc> plugin_;
};

TEST_F(DpDoctorIntegrationTest, MetricsShowADownPortAsFailAndItsRecovery) {
  DoctorNode node;
  node.tree().setNetdevUp("ens1f1", false);
  const int port = startPlugin(node, "200ms");
  ASSERT_GT(port, 0) << plugin_->log();
  const std::string down = "rdmanet_doctor_check{check=\"link\",device=\"ens1f1\"} 2\n";
  std::string body = scrapeUntil(port, down, 10s);
  ASSERT_THAT(body, HasSubstr(down)) << plugin_->log();
  EXPECT_THAT(body, HasSubstr("rdmanet_doctor_check{check=\"link\",device=\"ens1f0\"} 0\n"));
  // The device plugin's own series are still there, in the same scrape.
  EXPECT_THAT(body, HasSubstr("# TYPE rdmanet_dp_devices gauge"));

  // Periodic: the next run sees the port back up, and has the previous run as counter baseline.
  node.tree().setNetdevUp("ens1f1", true);
  const std::string up = "rdmanet_doctor_check{check=\"link\",device=\"ens1f1\"} 0\n";
  body = scrapeUntil(port, up, 10s);
  EXPECT_THAT(body, HasSubstr(up)) << plugin_->log();
  EXPECT_THAT(body, HasSubstr("rdmanet_doctor_counter_delta{port=\"mlx5_0/1\""));
  EXPECT_TRUE(plugin_->logContains("node doctor: FAIL")) << plugin_->log();
}

// The periodic doctor stays off the start-up path: its first run starts only after every pool
// registered with kubelet, never competing with discovery and registration.
TEST_F(DpDoctorIntegrationTest, TheDoctorFirstRunsAfterEveryPoolIsRegistered) {
  DoctorNode node;
  const int port = startPlugin(node, "200ms");
  ASSERT_GT(port, 0) << plugin_->log();
  ASSERT_TRUE(plugin_->logContains("node doctor:", 10s)) << plugin_->log();
  const std::string log = plugin_->log();
  const size_t doctor = log.find("node doctor:");
  size_t last_registered = 0;
  for (size_t at = log.find("registered with kubelet"); at != std::string::npos;
       at = log.find("registered with kubelet", at + 1)) {
    last_registered = at;
  }
  ASSERT_GT(last_registered, 0u) << log;
  EXPECT_GT(doctor, last_registered) << log;
}

// Bounded shutdown (issue 23, item 5): a doctor run that cannot finish does not hold up SIGTERM.
// Here its read blocks: the simulated node's cpuidle driver file is a FIFO that the test opens
// for writing and never writes. (Four integration tests once missed their 10 s exit wait behind
// a doctor run that took 7.6 s on a loaded machine.)
TEST_F(DpDoctorIntegrationTest, SigtermDuringADoctorRunThatBlocksExitsWithinFiveSeconds) {
  DoctorNode node;
  const fs::path fifo = node.root() / "sys/devices/system/cpu/cpuidle/current_driver";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int port = startPlugin(node, "60s");
  ASSERT_GT(port, 0) << plugin_->log();
  // A writer can open the FIFO without blocking once the doctor has it open for reading: that
  // is the run, blocked. The writer held open keeps the doctor's read blocked.
  Fd writer;
  (void)rdmanet::testing::eventually(  // polling for the reader
      [&] {
        writer = Fd(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
        return writer.get() >= 0;
      },
      20s, 10ms);
  ASSERT_GE(writer.get(), 0) << "the doctor never read the FIFO\n" << plugin_->log();
  const auto t0 = std::chrono::steady_clock::now();
  plugin_->child().signal(SIGTERM);
  const int rc = plugin_->child().wait(10s);
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  EXPECT_EQ(rc, 0) << plugin_->log();
  EXPECT_LT(took, 5s) << took.count() << " ms\n" << plugin_->log();
  EXPECT_THAT(plugin_->log(), HasSubstr("abandoning it"));
  std::printf("SIGTERM during a blocked doctor run: exit in %lld ms\n",
              static_cast<long long>(took.count()));
  plugin_.reset();  // SIGKILL if it is still running
}

TEST_F(DpDoctorIntegrationTest, IntervalZeroDisablesTheDoctor) {
  DoctorNode node;
  const int port = startPlugin(node, "0");
  ASSERT_GT(port, 0) << plugin_->log();
  // The plugin's own series show it serves; the doctor's never appear.
  const std::string body = scrapeUntil(port, "rdmanet_dp_devices{", 10s);
  EXPECT_THAT(body, HasSubstr("rdmanet_dp_devices{"));
  EXPECT_THAT(body, Not(HasSubstr("rdmanet_doctor_")));
  EXPECT_FALSE(plugin_->logContains("node doctor:", 300ms));
}

TEST_F(DpDoctorIntegrationTest, DoctorSubcommandMatchesRdmanetDoctor) {
  DoctorNode node;
  node.tree().setNetdevUp("ens2f0", false);
  const std::string root = " --sysfs-root " + node.root().string();
  const ProcResult dp = runCommand(std::string(RDMANET_DP_BIN) + " doctor" + root);
  const ProcResult doc = runCommand(std::string(RDMANET_DOCTOR_BIN) + root);
  EXPECT_EQ(dp.rc, 1) << dp.out;
  EXPECT_EQ(dp.rc, doc.rc);
  EXPECT_EQ(dp.out, doc.out);
  EXPECT_THAT(dp.out, HasSubstr("ens2f0"));

  const ProcResult json =
      runCommand(std::string(RDMANET_DP_BIN) + " doctor --json --expect-mtu 1500" +
                 " --lossless-priority 5" + root);
  ASSERT_EQ(json.rc, 1) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["exit_code"], 1);
  bool seen = false;
  for (const auto& c : j["checks"]) {
    if (c["check"] == "link" && c["device"] == "ens2f0") {
      EXPECT_EQ(c["verdict"], "FAIL");
      seen = true;
    }
  }
  EXPECT_TRUE(seen) << json.out;

  const ProcResult dot = runCommand(std::string(RDMANET_DP_BIN) + " doctor --dot" + root);
  EXPECT_THAT(dot.out, HasSubstr("digraph"));
}

TEST_F(DpDoctorIntegrationTest, DoctorSubcommandUsageErrorsExitTwo) {
  DoctorNode node;
  ProcResult r = runCommand(std::string(RDMANET_DP_BIN) + " doctor --frobnicate", "");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.out, HasSubstr("--frobnicate"));
  r = runCommand(std::string(RDMANET_DP_BIN) + " doctor --lossless-priority 9 --sysfs-root " +
                     node.root().string(),
                 "");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.out, HasSubstr("--lossless-priority"));
  r = runCommand(std::string(RDMANET_DP_BIN) + " doctor --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_THAT(r.out, HasSubstr("--baseline FILE"));
  // A healthy node passes: exit 0.
  r = runCommand(std::string(RDMANET_DP_BIN) + " doctor --sysfs-root " + node.root().string());
  EXPECT_EQ(r.rc, 0) << r.out;
}

// `doctor probe` is rdmanet-doctor's probe in the daemon's binary: the same usage, the same
// usage errors, the same report and exit code for a peer nobody serves (no RDMA device here, or
// nobody listening: a FAIL either way, within the time-out). The VM test preflight.sh runs it
// over Soft-RoCE to a PASS.
TEST_F(DpDoctorIntegrationTest, DoctorProbeIsRdmanetDoctorProbe) {
  const std::string dp = std::string(RDMANET_DP_BIN) + " doctor probe";
  const std::string doc = std::string(RDMANET_DOCTOR_BIN) + " probe";
  ProcResult a = runCommand(dp + " --help");
  ProcResult b = runCommand(doc + " --help");
  EXPECT_EQ(a.rc, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_THAT(a.out, HasSubstr("--listen"));

  a = runCommand(dp + " --count 0 127.0.0.1", "");
  b = runCommand(doc + " --count 0 127.0.0.1", "");
  EXPECT_EQ(a.rc, 2);
  EXPECT_THAT(a.out, HasSubstr("--count"));
  EXPECT_EQ(a.out, b.out);

  const std::string run = " 127.0.0.1 --port 18999 --count 1 --timeout-ms 500 --json";
  a = runCommand(dp + run);
  b = runCommand(doc + run);
  EXPECT_EQ(a.rc, 1) << a.out;
  EXPECT_EQ(a.rc, b.rc);
  const auto ja = nlohmann::json::parse(a.out);
  const auto jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["verdict"], "FAIL");
  EXPECT_EQ(ja["failed"], jb["failed"]) << a.out << b.out;
  EXPECT_FALSE(ja["problems"].empty());
}

// `doctor preflight` is rdmanet-doctor's pre-flight in the daemon's binary: the same usage, the
// same usage errors, the same exit 2 when the API server cannot be reached (its flow through
// the API is tested against the stand-in API server, tests/deviceplugin/doctor/preflight/).
TEST_F(DpDoctorIntegrationTest, DoctorPreflightIsRdmanetDoctorPreflight) {
  const std::string dp = std::string(RDMANET_DP_BIN) + " doctor preflight";
  const std::string doc = std::string(RDMANET_DOCTOR_BIN) + " preflight";
  ProcResult a = runCommand(dp + " --help");
  ProcResult b = runCommand(doc + " --help");
  EXPECT_EQ(a.rc, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_THAT(a.out, HasSubstr("--claim-template"));

  a = runCommand(dp + " --image i --network n --pairs mesh", "");
  b = runCommand(doc + " --image i --network n --pairs mesh", "");
  EXPECT_EQ(a.rc, 2);
  EXPECT_THAT(a.out, HasSubstr("--pairs: \"mesh\" is not ring or all"));
  EXPECT_EQ(a.out, b.out);

  const std::string kc = (work_ / "missing-kubeconfig").string();
  a = runCommand(dp + " --kubeconfig " + kc + " --image i --network n", "");
  b = runCommand(doc + " --kubeconfig " + kc + " --image i --network n", "");
  EXPECT_EQ(a.rc, 2) << a.out;
  EXPECT_THAT(a.out, HasSubstr(kc));
  EXPECT_EQ(a.out, b.out);
}

TEST_F(DpDoctorIntegrationTest, InstallCniCopiesTheBinaryNextToItTwice) {
  // The image's layout: both binaries in one directory. Any ELF stands in for `rdmanet`.
  const fs::path bin = work_ / "bin", host = work_ / "host";
  fs::create_directories(bin);
  fs::create_directories(host);
  fs::copy_file(RDMANET_DP_BIN, bin / "rdmanet-device-plugin");
  fs::copy_file(RDMANET_DOCTOR_BIN, bin / "rdmanet");
  const std::string cmd =
      (bin / "rdmanet-device-plugin").string() + " --install-cni " + host.string();
  for (const char* round : {"first", "upgrade"}) {
    const ProcResult r = runCommand(cmd, "");
    ASSERT_EQ(r.rc, 0) << round << ": " << r.out;
    EXPECT_EQ(slurp(host / "rdmanet"), slurp(bin / "rdmanet")) << round;
    struct stat st {};
    ASSERT_EQ(::stat((host / "rdmanet").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u) << round;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(host)) names.push_back(e.path().filename());
    EXPECT_EQ(names, std::vector<std::string>{"rdmanet"}) << round;
  }
}

TEST_F(DpDoctorIntegrationTest, InstallCniWithoutTheCniBinaryFailsClearly) {
  const fs::path bin = work_ / "bin", host = work_ / "host";
  fs::create_directories(bin);
  fs::create_directories(host);
  fs::copy_file(RDMANET_DP_BIN, bin / "rdmanet-device-plugin");
  ProcResult r =
      runCommand((bin / "rdmanet-device-plugin").string() + " --install-cni " + host.string(), "");
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.out, HasSubstr((bin / "rdmanet").string()));
  EXPECT_TRUE(fs::is_empty(host));
  r = runCommand(
      (bin / "rdmanet-device-plugin").string() + " --install-cni " + (work_ / "nodir").string(),
      "");
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.out, HasSubstr("nodir"));
}

}  // namespace
}  // namespace rdmanet::dp::testing
