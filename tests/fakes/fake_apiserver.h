#pragma once
// FakeApiServer: runs the stand-in Kubernetes API server (tests/fakes/apiserver/apiserver.mjs,
// Node.js) as a child process on a random loopback port, for tests that need a real HTTP peer
// speaking the Kubernetes REST shapes. The process is killed (by its pid) when this is destroyed.

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/kube/client.h"
#include "common/kube/config.h"

namespace rdmanet::testing {

class FakeApiServer {
 public:
  // Starts the server with these accepted bearer tokens (none: no authentication). With a
  // tls_dir (server.crt, server.key, ca.crt) it serves HTTPS and also accepts client
  // certificates signed by ca.crt. Check ok() afterwards; error() says why it could not start
  // (no node, no kubernetes-models 5.1.0).
  explicit FakeApiServer(std::vector<std::string> tokens = {}, std::string tls_dir = {});
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  bool ok() const { return pid_ > 0 && port_ > 0; }
  const std::string& error() const { return error_; }
  std::string url() const {
    return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_);
  }
  // A KubeConfig pointing at it (no credentials; over TLS, trusting its ca.crt).
  kube::KubeConfig config() const;

  // Test controls (see apiserver.mjs): the next `count` requests matching method/path fail with
  // `status`, or (hang_ms > 0) get no answer and are dropped after hang_ms, or (delay) are
  // answered as usual only after delay_ms. `agent` (fail only): only requests with that
  // User-Agent (kube::ClientOptions::user_agent) fail.
  void fail(const std::string& method, const std::string& path, int status, int count = 1,
            const std::string& agent = "");
  void hang(const std::string& method, const std::string& path, int hang_ms, int count = 1);
  void delay(const std::string& method, const std::string& path, int delay_ms, int count = 1);
  // Drops every fault not yet used up: from now on the server answers normally.
  void clearFaults();
  void setGate(const std::string& gate, bool on);
  void setTokens(const std::vector<std::string>& tokens);
  // {"requests":{"GET":n,...},"writes":n}
  nlohmann::json stats();
  // What GET /api/v1/namespaces/NS/pods/POD:PORT/proxy/PATH answers from now on (the pod must
  // exist; without an answer set the proxy says 503, nothing listens).
  void setProxyAnswer(const std::string& ns, const std::string& pod, const std::string& port,
                      const std::string& path, const std::string& body, int status = 200);
  // Creates a Node and returns its uid (plain HTTP, or with a token the server accepts).
  std::string createNode(const std::string& name);

 private:
  void control(const std::string& path, const nlohmann::json& body);

  pid_t pid_ = -1;
  bool tls_ = false;
  std::string tls_dir_;
  int port_ = 0;
  std::string error_;
};

}  // namespace rdmanet::testing
