#include "tests/fakes/fake_apiserver.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

extern char** environ;

namespace rdmanet::testing {
namespace {

std::string toolsDir() {
  const char* d = std::getenv("RDMANET_TOOLS_DIR");
  return d != nullptr ? d : "/opt/rdmanet-tools";
}

}  // namespace

FakeApiServer::FakeApiServer(std::vector<std::string> tokens, std::string tls_dir)
    : tls_(!tls_dir.empty()), tls_dir_(std::move(tls_dir)) {
  const auto models =
      std::filesystem::path(toolsDir()) / "node/node_modules/kubernetes-models-5/package.json";
  if (!std::filesystem::exists(models)) {
    error_ = models.string() + " is missing: run hack/install-helm.sh";
    return;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error_ = "pipe failed";
    return;
  }
  std::vector<std::string> args = {"node", RDMANET_APISERVER_SCRIPT};
  for (const auto& t : tokens) {
    args.push_back("--token");
    args.push_back(t);
  }
  if (tls_) {
    args.push_back("--tls-dir");
    args.push_back(tls_dir_);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  const int rc = posix_spawnp(&pid_, "node", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    pid_ = -1;
    ::close(fds[0]);
    error_ = "cannot run node (Node.js): " + std::string(strerror(rc));
    return;
  }
  // The server prints {"port":N} once listening; poll for it with a deadline.
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (out.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[256];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  const auto j = nlohmann::json::parse(out.substr(0, out.find('\n')), nullptr, false);
  if (!j.is_object() || !j.contains("port")) {
    error_ = "the stand-in API server did not report its port (output: \"" + out + "\")";
    return;
  }
  port_ = j["port"].get<int>();
}

FakeApiServer::~FakeApiServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

kube::KubeConfig FakeApiServer::config() const {
  kube::KubeConfig c;
  c.server = url();
  if (tls_) c.ca_file = tls_dir_ + "/ca.crt";
  return c;
}

void FakeApiServer::control(const std::string& path, const nlohmann::json& body) {
  kube::KubeClient c(config(), {.retry = {.max_attempts = 1}});
  (void)c.create(path, body);
}

void FakeApiServer::fail(const std::string& method, const std::string& path, int status, int count,
                         const std::string& agent) {
  control(
      "/_control/faults",
      {{"method", method}, {"path", path}, {"status", status}, {"count", count}, {"agent", agent}});
}

void FakeApiServer::hang(const std::string& method, const std::string& path, int hang_ms,
                         int count) {
  control("/_control/faults",
          {{"method", method}, {"path", path}, {"hang_ms", hang_ms}, {"count", count}});
}

void FakeApiServer::delay(const std::string& method, const std::string& path, int delay_ms,
                          int count) {
  control("/_control/faults",
          {{"method", method}, {"path", path}, {"delay_ms", delay_ms}, {"count", count}});
}

void FakeApiServer::clearFaults() {
  kube::KubeClient c(config(), {.retry = {.max_attempts = 1}});
  (void)c.remove("/_control/faults");
}

void FakeApiServer::setGate(const std::string& gate, bool on) {
  control("/_control/gates", {{gate, on}});
}

void FakeApiServer::setTokens(const std::vector<std::string>& tokens) {
  control("/_control/tokens", {{"tokens", tokens}});
}

void FakeApiServer::setProxyAnswer(const std::string& ns, const std::string& pod,
                                   const std::string& port, const std::string& path,
                                   const std::string& body, int status) {
  control("/_control/proxy", {{"namespace", ns},
                              {"pod", pod},
                              {"port", port},
                              {"path", path},
                              {"body", body},
                              {"status", status}});
}

nlohmann::json FakeApiServer::stats() {
  kube::KubeClient c(config(), {.retry = {.max_attempts = 1}});
  auto r = c.get("/_control/stats");
  return r.ok() ? *r : nlohmann::json();
}

std::string FakeApiServer::createNode(const std::string& name) {
  kube::KubeClient c(config(), {.retry = {.max_attempts = 1}});
  auto r = c.create("/api/v1/nodes",
                    {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}});
  return r.ok() ? (*r)["metadata"]["uid"].get<std::string>() : std::string();
}

}  // namespace rdmanet::testing
