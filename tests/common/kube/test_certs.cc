#include "tests/common/kube/test_certs.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <vector>

extern char** environ;

namespace rdmanet::kube {
namespace {

// Runs openssl with these arguments (no shell); "" on exit 0.
std::string openssl(std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, "openssl", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return "cannot run openssl";
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return "openssl " + args[1] + " failed";
  return "";
}

std::string leaf(const std::filesystem::path& dir, const std::string& name, const std::string& cn,
                 const std::string& ext) {
  const auto p = [&](const std::string& f) { return (dir / f).string(); };
  std::ofstream(p(name + ".ext")) << ext << "\n";
  for (auto args : std::vector<std::vector<std::string>>{
           {"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", p(name + ".key"), "-out", p(name + ".csr"), "-subj", "/CN=" + cn},
           {"x509", "-req", "-in", p(name + ".csr"), "-CA", p("ca.crt"), "-CAkey", p("ca.key"),
            "-CAcreateserial", "-out", p(name + ".crt"), "-days", "2", "-extfile",
            p(name + ".ext")}}) {
    if (auto e = openssl(args); !e.empty()) return e;
  }
  return "";
}

}  // namespace

std::string makeTestCerts(const std::filesystem::path& dir) {
  const auto p = [&](const std::string& f) { return (dir / f).string(); };
  if (auto e = openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", p("ca.key"), "-out", p("ca.crt"), "-subj",
                        "/CN=rdmanet-test-ca", "-days", "2"});
      !e.empty()) {
    return e;
  }
  if (auto e = leaf(dir, "server", "127.0.0.1", "subjectAltName=IP:127.0.0.1"); !e.empty()) {
    return e;
  }
  return leaf(dir, "client", "system:node:node-1", "extendedKeyUsage=clientAuth");
}

}  // namespace rdmanet::kube
