// The real rdmanet-doctor binary's pre-flight against the stand-in API server, stopped by
// SIGTERM while it waits for its probe servers (nobody plays kubelet here, so they never run):
// it exits 2 saying so, and deletes the pods it made. The signal path of runHostPreflight, which
// the in-process tests (run_test.cc) drive through the stop flag only.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/simnode/temp_dir.h"

extern char** environ;

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

TEST(PreflightSignalTest, SigtermMidRunExitsTwoAndDeletesItsPods) {
  FakeApiServer server;
  if (!server.ok()) GTEST_SKIP() << server.error();
  kube::KubeClient c(server.config(), {.retry = {.max_attempts = 1}});
  for (const std::string n : {"vm1", "vm2"}) {
    ASSERT_TRUE(c.create("/api/v1/nodes", {{"metadata", {{"name", n}}},
                                           {"status", {{"allocatable", {{"rdma/vf", "4"}}}}}})
                    .ok());
  }
  ASSERT_TRUE(c.create("/apis/k8s.cni.cncf.io/v1/namespaces/rdmanet/network-attachment-definitions",
                       {{"metadata", {{"name", "rdma-vf"}}},
                        {"spec", {{"config", R"({"type":"rdmanet"})"}}}})
                  .ok());
  const sim::TempDir dir;
  const std::string kubeconfig = (dir.path() / "kubeconfig").string();
  const std::string log = (dir.path() / "stderr").string();
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\n"
                            << "clusters: [{name: fake, cluster: {server: \"" << server.url()
                            << "\"}}]\ncontexts: [{name: fake, context: {cluster: fake}}]\n"
                            << "current-context: fake\n";

  std::vector<std::string> args = {RDMANET_DOCTOR_BIN, "preflight", "--kubeconfig", kubeconfig,
                                   "--image",          "img:1",     "--network",    "rdma-vf",
                                   "--timeout",        "600"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);

  const auto probePods = [&] {
    auto l = c.list("/api/v1/namespaces/rdmanet/pods",
                    {.label_selector = "app.kubernetes.io/name=rdmanet-preflight"});
    return l.ok() ? (*l)["items"].size() : size_t{999};
  };
  const bool started = testing::eventually([&] { return probePods() == 2; });
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started) << "the two probe server pods never appeared";
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::stringstream err;
  err << std::ifstream(log).rdbuf();
  EXPECT_NE(err.str().find("interrupted (SIGINT/SIGTERM): the run's pods were deleted"),
            std::string::npos)
      << err.str();
  EXPECT_EQ(probePods(), 0u);
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
