#pragma once
// DraBinaryTest: the real rdmanet-device-plugin binary with --api dra, against the stand-in
// kubelet and API server (DraPrepareTest's), for restarts, kills and shutdown.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/deviceplugin/dra/prepare_fixture.h"
#include "tests/fakes/eventually.h"

extern char** environ;

namespace rdmanet::dp::testing {

class DraBinaryTest : public DraPrepareTest {
 protected:
  void TearDown() override {
    stopBinary(SIGTERM);
    DraPrepareTest::TearDown();
    if (!kubeconfig_dir_.empty()) fs::remove_all(kubeconfig_dir_);  // nothing left in /dev/shm
  }
  void startBinary() {
    if (kubeconfig_dir_.empty()) kubeconfig_dir_ = makeTempDir("dra-kubeconfig");
    const fs::path kubeconfig = kubeconfig_dir_ / "kubeconfig";
    std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
                              << "clusters: [{name: t, cluster: {server: '" << api_->url()
                              << "'}}]\ncontexts: [{name: t, context: {cluster: t, user: t}}]\n"
                              << "users: [{name: t, user: {token: t}}]\n";
    std::vector<std::string> args = {RDMANET_DP_BIN,
                                     "--api=dra",
                                     "--node-name=" + std::string(kNode),
                                     "--kubeconfig=" + kubeconfig.string(),
                                     "--kubelet-dir=" + kubelet_dir_.string(),
                                     "--cdi-dir=" + cdi_dir_.string(),
                                     "--sysfs-root=" + node_.root().string(),
                                     "--metrics-addr=off",
                                     "--doctor-interval=0"};
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, RDMANET_DP_BIN, nullptr, nullptr, argv.data(), environ), 0);
  }
  void stopBinary(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // Waits up to `timeout` for the binary to exit; its wait status, or nullopt (still running).
  std::optional<int> waitExit(std::chrono::milliseconds timeout) {
    int status = 0;
    const bool exited = rdmanet::testing::eventually(  // polling the child
        [&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout);
    if (!exited) return std::nullopt;
    pid_ = -1;
    return status;
  }
  pid_t pid_ = -1;
  fs::path kubeconfig_dir_;
  std::vector<std::string> extra_args_;  // appended to the binary's flags
};

}  // namespace rdmanet::dp::testing
