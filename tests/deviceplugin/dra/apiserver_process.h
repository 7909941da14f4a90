#pragma once
// The stand-in API server (tests/fakes/apiserver/apiserver.mjs, Node.js) as a child process of
// the test: started on a random loopback port, killed by the destructor. kubeconfig() writes a
// kubeconfig for it, so the product's own REST client (common/kube) talks to it.

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace rdmanet::dp::testing {

class ApiServerProcess {
 public:
  ApiServerProcess() = default;
  ~ApiServerProcess();
  ApiServerProcess(const ApiServerProcess&) = delete;
  ApiServerProcess& operator=(const ApiServerProcess&) = delete;

  // Spawns node and waits (up to 20 s) for its {"port":N} line. False when it did not come.
  bool start();
  void kill();
  int port() const { return port_; }
  std::string url() const;
  // Writes a kubeconfig naming this server into `dir`; returns its path.
  std::filesystem::path writeKubeconfig(const std::filesystem::path& dir) const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace rdmanet::dp::testing
