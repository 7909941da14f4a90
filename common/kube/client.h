#pragma once
// KubeClient: the few REST verbs rdmanet needs from the Kubernetes API server, over libcurl.
//
// Paths are absolute API paths ("/apis/resource.k8s.io/v1/resourceslices/NAME"); callers build
// them from validated names (see kube/paths.h). Bodies and answers are JSON objects as the API
// server writes them. Nothing here logs: every failure is an Error with code 104
// (kKubeApiFailure) whose http_status is the server's status (0 when no answer came: refused
// connection, time-out, TLS failure) and whose msg carries the metav1.Status message; use the
// predicates in kube/api_error.h to tell 401/403/404/409/422/429/5xx apart.
//
// Retries: a request that got no answer, or got 429/500/502/503/504, is tried again after a
// backoff (initial, doubled each time, capped; a Retry-After header of at most max_backoff is
// honoured) until max_attempts. POST is retried only when nothing reached the server (connection
// refused) or on 429, because a create that timed out may have happened. A 401 re-reads the
// token file once before giving up (the token may have just rotated).
//
// Thread-safety: one request at a time per client (calls are serialised by a mutex); the
// connection is kept alive between requests.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "common/base/result.h"
#include "common/kube/config.h"
#include "common/kube/token_source.h"

namespace rdmanet::kube {

struct RetryPolicy {
  int max_attempts = 4;  // tries per request, the first included
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{15000};  // the whole request, answer included
  RetryPolicy retry;
  // Waits between attempts. Default: std::this_thread::sleep_for. Tests inject their own.
  std::function<void(std::chrono::milliseconds)> sleep{};
  std::string user_agent = "rdmanet";
};

struct ListOptions {
  std::string label_selector{};  // "app=x,tier!=y"
  std::string field_selector{};  // "spec.nodeName=n1,spec.driver=rdma.rdmanet.io"
};

struct CurlApi;  // curl_library.h

class KubeClient {
 public:
  explicit KubeClient(KubeConfig config, ClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // GET one object.
  Result<nlohmann::json> get(const std::string& path);
  // GET a collection ("...List" object with .items), filtered by the selectors.
  Result<nlohmann::json> list(const std::string& path, const ListOptions& options = {});
  // POST to a collection path; returns the stored object (uid, resourceVersion, generated name).
  Result<nlohmann::json> create(const std::string& path, const nlohmann::json& object);
  // PUT to an object path. The object's metadata.resourceVersion makes it conditional: the
  // server answers 409 when the stored object changed since it was read.
  Result<nlohmann::json> update(const std::string& path, const nlohmann::json& object);
  // DELETE an object. A missing object is an error (404): callers that only want it gone check
  // isNotFound().
  Status remove(const std::string& path);

  const KubeConfig& config() const { return config_; }

 private:
  struct Answer {
    long status = 0;
    std::string body;
    std::chrono::milliseconds retry_after{0};
  };
  Result<nlohmann::json> call(const char* method, const std::string& path,
                              const nlohmann::json* body);
  // One HTTP exchange. Error (http_status 0) when no answer came; `sent` says whether the
  // request may have reached the server.
  Result<Answer> exchange(const char* method, const std::string& url, const std::string* body,
                          bool& sent);

  KubeConfig config_;
  ClientOptions options_;
  TokenSource tokens_;
  std::mutex mu_;
  const CurlApi* curl_api_ = nullptr;  // null when libcurl could not be loaded:
  std::string curl_error_{};           // then every request fails with this
  void* curl_ = nullptr;               // CURL*, kept so connections are reused
};

}  // namespace rdmanet::kube
