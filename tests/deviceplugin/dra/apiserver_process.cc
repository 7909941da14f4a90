#include "tests/deviceplugin/dra/apiserver_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

extern char** environ;

namespace rdmanet::dp::testing {

namespace fs = std::filesystem;

ApiServerProcess::~ApiServerProcess() { kill(); }

bool ApiServerProcess::start() {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  const std::string script =
      (fs::path(RDMANET_SOURCE_DIR) / "tests/fakes/apiserver/apiserver.mjs").string();
  const char* argv[] = {"node", script.c_str(), nullptr};
  int rc = posix_spawnp(&pid_, "node", &fa, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    pid_ = -1;
    return false;
  }
  // Reads the first line, polling with a deadline (node takes a moment to load the schema).
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    char buf[256];
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  auto j = nlohmann::json::parse(line.substr(0, line.find('\n')), nullptr, false);
  if (j.is_discarded() || !j.contains("port")) {
    kill();
    return false;
  }
  port_ = j["port"].get<int>();
  return true;
}

void ApiServerProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string ApiServerProcess::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

fs::path ApiServerProcess::writeKubeconfig(const fs::path& dir) const {
  const fs::path file = dir / "kubeconfig";
  std::ofstream(file) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                      << "clusters:\n- name: test\n  cluster:\n    server: " << url() << "\n"
                      << "contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n"
                      << "users:\n- name: test\n  user:\n    token: test-token\n";
  return file;
}

}  // namespace rdmanet::dp::testing
