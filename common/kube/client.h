#pragma once
// KubeClient: the few REST verbs rdmanet needs from the Kubernetes API server, over libcurl.
//
// Paths are absolute API paths ("/apis/resource.k8s.io/v1/resourceslices/NAME"); callers build
// them from validated names (see deviceplugin/dra/apiserver/api_paths.h). Bodies and answers are
// JSON objects as the API server writes them. Nothing here logs: every failure is an Error with
// code 104 (kKubeApiFailure) whose http_status is the server's status (0 when no answer came:
// refused connection, time-out, TLS failure) and whose msg carries the metav1.Status message; use
// the predicates in kube/api_error.h to tell 401/403/404/409/422/429/5xx apart.
//
// Retries: a request that got no answer, or got 429/500/502/503/504, is tried again after a
// backoff (initial, doubled each time, capped; a Retry-After header of at most max_backoff is
// honoured) until max_attempts. POST is retried only when nothing reached the server (connection
// refused) or on 429, because a create that timed out may have happened. A 401 re-reads the
// token file once before giving up (the token may have just rotated).
//
// Bounds: every verb takes the caller's Deadline. An attempt's time-out is cut to what is left of
// it, and no attempt or backoff starts past it, so a call returns by then (error 104, no answer).
// cancel() ends every call in flight within about a second (libcurl's progress callback) and
// wakes their backoff waits at once: what shutdown needs.
//
// Time: backoff waits and the caller's deadline are on the injected clock (ClientOptions::clock),
// so tests drive the retry schedule with a fake one instead of sleeping. A request's own
// time-outs are libcurl's, on real time.
//
// Thread-safety: calls run concurrently, each on a connection of its own (a pool of libcurl
// handles, kept alive between requests); no lock is held across a request or a backoff wait, so
// one stalled request never holds up another.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/deadline.h"
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
  RetryPolicy retry{};
  // Times the waits between attempts and the callers' deadlines; must outlive the client. Null:
  // real time.
  const Clock* clock = nullptr;
  std::string user_agent = "rdmanet";
  // The largest answer body read: a larger one is dropped and the call fails (104, naming the
  // cap, not retried) rather than letting a broken or hostile server fill the daemon's memory.
  // 32 MiB is generous: the list of a 1016-VF node's ResourceSlices (1024 devices in 16 slices)
  // is 0.65 MiB, 2% of it, as the stand-in API server writes it
  // (tests/deviceplugin/dra/apiserver/slice_list_size_test.cc; a real server's managedFields add
  // a little), and the largest object etcd stores is 1.5 MiB; lists that could grow with the
  // cluster are read in pages (ListOptions::limit).
  size_t max_response_bytes = size_t{32} << 20;
};

struct ListOptions {
  std::string label_selector{};  // "app=x,tier!=y"
  std::string field_selector{};  // "spec.nodeName=n1,spec.driver=rdma.rdmanet.io"
  // One page: at most `limit` items (0: the server's default, all), from the `continue` token
  // a previous page's metadata.continue gave.
  size_t limit = 0;
  std::string continue_token{};
};

struct CurlApi;  // curl_library.h

class KubeClient {
 public:
  explicit KubeClient(KubeConfig config, ClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // GET one object.
  Result<nlohmann::json> get(const std::string& path, const Deadline& deadline = {});
  // GET a non-JSON answer as text, with the same retries, bounds and cap: a pod's /metrics
  // through the API server's proxy (/api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics).
  Result<std::string> getText(const std::string& path, const Deadline& deadline = {});
  // GET a collection ("...List" object with .items), filtered by the selectors.
  Result<nlohmann::json> list(const std::string& path, const ListOptions& options = {},
                              const Deadline& deadline = {});
  // POST to a collection path; returns the stored object (uid, resourceVersion, generated name).
  Result<nlohmann::json> create(const std::string& path, const nlohmann::json& object,
                                const Deadline& deadline = {});
  // PUT to an object path. The object's metadata.resourceVersion makes it conditional: the
  // server answers 409 when the stored object changed since it was read.
  Result<nlohmann::json> update(const std::string& path, const nlohmann::json& object,
                                const Deadline& deadline = {});
  // DELETE an object. A missing object is an error (404): callers that only want it gone check
  // isNotFound().
  Status remove(const std::string& path, const Deadline& deadline = {});

  // Ends every call in flight (within about a second) and fails every later one at once, with
  // error 104 (no answer) saying so. For shutdown; irreversible. Thread-safe.
  void cancel();
  bool cancelled() const { return cancelled_.load(); }

  const KubeConfig& config() const { return config_; }

 private:
  struct Answer {
    long status = 0;
    std::string body;
    std::chrono::milliseconds retry_after{0};
  };
  Result<nlohmann::json> call(const char* method, const std::string& path,
                              const nlohmann::json* body, const Deadline& deadline);
  // call() up to the answer: its body, as it came, of a 2xx answer.
  Result<std::string> callRaw(const char* method, const std::string& path,
                              const nlohmann::json* body, const Deadline& deadline,
                              const char* accept);
  // One HTTP exchange on a pooled handle, its time-out cut to `deadline`. Error (http_status 0)
  // when no answer came; `sent` says whether the request may have reached the server, and
  // `final_answer` that trying again cannot help (an answer over max_response_bytes).
  Result<Answer> exchange(const char* method, const std::string& url, const std::string* body,
                          const char* accept, const Deadline& deadline, bool& sent,
                          bool& final_answer);
  // Waits `d` unless cancel() comes first.
  void backoff(std::chrono::milliseconds d);
  void* takeHandle();  // CURL*: an idle one, or a new one (null when libcurl cannot make one)
  void returnHandle(void* handle);

  KubeConfig config_;
  ClientOptions options_;
  const SteadyClock steady_clock_;  // options_.clock when none was given
  const Clock& clock_;
  std::mutex token_mu_;  // TokenSource is not thread-safe
  TokenSource tokens_;
  const CurlApi* curl_api_ = nullptr;  // null when libcurl could not be loaded:
  std::string curl_error_{};           // then every request fails with this
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;  // guards idle_ and the cancel wake-up; never held across a request or a wait
  std::condition_variable cancel_cv_;
  std::vector<void*> idle_;  // CURL* handles not in use, kept so connections are reused
};

}  // namespace rdmanet::kube
