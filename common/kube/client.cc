#include "common/kube/client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/json/json_dump.h"
#include "common/kube/api_error.h"
#include "common/kube/curl_library.h"

namespace rdmanet::kube {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// Where an answer's body goes, and how much of it may come.
struct BodySink {
  std::string* body;
  size_t max;
  bool over = false;
};

// Returning less than was given makes libcurl end the transfer (CURLE_WRITE_ERROR).
size_t onBody(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  if (sink->body->size() + size * n > sink->max) {
    sink->over = true;
    return 0;
  }
  sink->body->append(data, size * n);
  return size * n;
}

// Only Retry-After in seconds (what the API server sends with 429); dates are ignored.
size_t onHeader(char* data, size_t size, size_t n, void* user) {
  std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    std::string head(line.substr(0, kName.size()));
    std::transform(head.begin(), head.end(), head.begin(), ::tolower);
    if (head == kName) {
      std::string_view v = line.substr(kName.size());
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      long secs = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
      if (ec == std::errc() && secs >= 0) {
        *static_cast<std::chrono::milliseconds*>(user) = std::chrono::seconds(secs);
      }
    }
  }
  return size * n;
}

// Aborts a transfer once the client is cancelled.
int onProgress(void* cancelled, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(cancelled)->load() ? 1 : 0;
}

// A failure without an answer from the server: 104 with http_status 0.
Error noAnswer(const char* method, const std::string& what, std::string_view why) {
  return makeError(ErrorCode::kKubeApiFailure, fmt::format("{} {}: {}", method, what, why));
}

// Runs its action when it goes out of scope: hands a handle back to the pool on every return.
struct HandleLease {
  std::function<void()> done;
  ~HandleLease() { done(); }
};

bool retriableStatus(long s) { return s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }

// Failures where the request cannot have reached the server.
bool notSent(CURLcode c) {
  return c == CURLE_COULDNT_CONNECT || c == CURLE_COULDNT_RESOLVE_HOST ||
         c == CURLE_COULDNT_RESOLVE_PROXY;
}

// RAII for a curl_slist of headers.
struct Headers {
  const CurlApi& curl;
  curl_slist* list = nullptr;
  ~Headers() { curl.slist_free_all(list); }
  void add(const std::string& h) { list = curl.slist_append(list, h.c_str()); }
};

void setBlob(const CurlApi& curl, CURL* c, CURLoption opt, const std::string& data) {
  curl_blob blob{const_cast<char*>(data.data()), data.size(), CURL_BLOB_COPY};
  curl.easy_setopt(c, opt, &blob);
}

}  // namespace

KubeClient::KubeClient(KubeConfig config, ClientOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : steady_clock_),
      tokens_(config_.token, config_.token_file) {
  auto api = libcurl();
  if (!api.ok()) {
    curl_error_ = api.error().msg;
    return;
  }
  curl_api_ = *api;
  // One handle up front, so a node whose libcurl cannot make one fails at the first request.
  void* first = curl_api_->easy_init();
  if (first == nullptr) {
    curl_error_ = "libcurl could not make a handle (curl_easy_init)";
    curl_api_ = nullptr;
    return;
  }
  idle_.push_back(first);
}

KubeClient::~KubeClient() {
  for (void* h : idle_) curl_api_->easy_cleanup(static_cast<CURL*>(h));
}

void KubeClient::cancel() {
  {
    std::lock_guard lk(mu_);
    cancelled_ = true;
  }
  cancel_cv_.notify_all();
}

void KubeClient::backoff(std::chrono::milliseconds d) {
  std::unique_lock lk(mu_);
  clock_.waitUntil(cancel_cv_, lk, clock_.now() + d, [this] { return cancelled_.load(); });
}

void* KubeClient::takeHandle() {
  {
    std::lock_guard lk(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_api_->easy_init();
}

void KubeClient::returnHandle(void* handle) {
  std::lock_guard lk(mu_);
  idle_.push_back(handle);
}

Result<json> KubeClient::get(const std::string& path, const Deadline& deadline) {
  return call("GET", path, nullptr, deadline);
}

Result<std::string> KubeClient::getText(const std::string& path, const Deadline& deadline) {
  return callRaw("GET", path, nullptr, deadline, "text/plain, */*");
}

Result<json> KubeClient::list(const std::string& path, const ListOptions& options,
                              const Deadline& deadline) {
  if (curl_api_ == nullptr) return makeError(ErrorCode::kInvalidEnv, curl_error_);
  std::string query;
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    char* esc = curl_api_->easy_escape(nullptr, value.c_str(), static_cast<int>(value.size()));
    query += fmt::format("{}{}={}", query.empty() ? "?" : "&", key, esc != nullptr ? esc : "");
    curl_api_->free(esc);
  };
  add("labelSelector", options.label_selector);
  add("fieldSelector", options.field_selector);
  if (options.limit > 0) add("limit", std::to_string(options.limit));
  add("continue", options.continue_token);
  return call("GET", path + query, nullptr, deadline);
}

Result<json> KubeClient::create(const std::string& path, const json& object,
                                const Deadline& deadline) {
  return call("POST", path, &object, deadline);
}

Result<json> KubeClient::update(const std::string& path, const json& object,
                                const Deadline& deadline) {
  return call("PUT", path, &object, deadline);
}

Status KubeClient::remove(const std::string& path, const Deadline& deadline) {
  auto r = call("DELETE", path, nullptr, deadline);
  if (!r.ok()) return r.error();
  return okStatus();
}

Result<json> KubeClient::call(const char* method, const std::string& path, const json* body,
                              const Deadline& deadline) {
  RDMANET_ASSIGN_OR_RETURN(const std::string text,
                           callRaw(method, path, body, deadline, "application/json"));
  if (text.empty()) return json::object();
  auto j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return makeError(ErrorCode::kDecodeFailure,
                     fmt::format("{} {}: the answer is not JSON", method, path));
  }
  return j;
}

Result<std::string> KubeClient::callRaw(const char* method, const std::string& path,
                                        const json* body, const Deadline& deadline,
                                        const char* accept) {
  if (path.empty() || path.front() != '/') {
    return makeError(ErrorCode::kInternal, fmt::format("API path \"{}\" is not absolute", path));
  }
  // Without libcurl (or a handle) no attempt can succeed: fail now rather than retry.
  if (curl_api_ == nullptr) return makeError(ErrorCode::kInvalidEnv, curl_error_);
  const std::string payload = body != nullptr ? dumpJson(*body) : std::string();
  const std::string url = config_.server + path;
  const bool is_post = std::string_view(method) == "POST";
  auto next_backoff = options_.retry.initial_backoff;
  bool token_refreshed = false;
  for (int attempt = 1;; ++attempt) {
    if (cancelled_) return noAnswer(method, path, "cancelled (shutting down)");
    if (deadline.passed(clock_)) return noAnswer(method, path, "the caller's deadline has passed");
    bool sent = false, final_answer = false;
    auto ans = exchange(method, url, body != nullptr ? &payload : nullptr, accept, deadline, sent,
                        final_answer);
    std::chrono::milliseconds wait = next_backoff;
    bool retriable = false;
    Error last;
    if (ans.ok()) {
      const long s = ans->status;
      if (s >= 200 && s < 300) return std::move(ans->body);
      if (s == 401 && !token_refreshed && !config_.token_file.empty()) {
        // The token may have rotated between our last stat and now: read it again, retry once.
        token_refreshed = true;
        std::lock_guard lk(token_mu_);
        if (tokens_.token(/*force=*/true).ok()) {
          --attempt;
          continue;
        }
      }
      last = statusError(method, path, s, ans->body);
      retriable = retriableStatus(s) && (!is_post || s == 429);
      if (ans->retry_after.count() > 0) {
        wait = std::min(std::max(wait, ans->retry_after), options_.retry.max_backoff);
      }
    } else {
      last = ans.error();
      retriable = !(is_post && sent) && !final_answer;
      if (attempt > 1) last.msg += fmt::format(" (after {} attempts)", attempt);
    }
    // Cancelled, or a wait that would end past the caller's deadline: no time for another try.
    if (!retriable || attempt >= options_.retry.max_attempts || cancelled_ ||
        deadline.left(wait, clock_) < wait) {
      return last;
    }
    backoff(wait);
    next_backoff = std::min(next_backoff * 2, options_.retry.max_backoff);
  }
}

Result<KubeClient::Answer> KubeClient::exchange(const char* method, const std::string& url,
                                                const std::string* body, const char* accept,
                                                const Deadline& deadline, bool& sent,
                                                bool& final_answer) {
  sent = false;
  final_answer = false;
  const CurlApi& curl = *curl_api_;  // not null: call() checked
  std::string token;
  {
    std::lock_guard lk(token_mu_);
    RDMANET_ASSIGN_OR_RETURN(token, tokens_.token());
  }
  CURL* c = static_cast<CURL*>(takeHandle());
  if (c == nullptr) {
    return makeError(ErrorCode::kKubeApiFailure,
                     fmt::format("{} {}: libcurl could not make a handle", method, url));
  }
  const HandleLease lease{[this, c] { returnHandle(c); }};
  curl.easy_reset(c);  // options only; the connection cache survives
  Answer a;
  Headers h{curl};
  h.add(fmt::format("Accept: {}", accept));
  if (body != nullptr) {
    h.add("Content-Type: application/json");
    // No "Expect: 100-continue" round trip before large bodies (a 64-device slice is ~20 KiB).
    h.add("Expect:");
  }
  if (!token.empty()) h.add("Authorization: Bearer " + token);
  curl.easy_setopt(c, CURLOPT_URL, url.c_str());
  curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  curl.easy_setopt(c, CURLOPT_HTTPHEADER, h.list);
  curl.easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  // No signals: the daemon is multi-threaded, and SIGALRM-based DNS time-outs are unsafe there.
  curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  // Cut to the caller's deadline; at least 1 ms, since 0 would mean no time-out at all.
  const auto timeout = std::max(deadline.left(options_.request_timeout, clock_), 1ms);
  curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(options_.connect_timeout, timeout).count()));
  curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  // cancel() ends the transfer from here: libcurl calls this at least once a second, also while
  // it waits for an answer that does not come.
  curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl.easy_setopt(c, CURLOPT_XFERINFODATA, &cancelled_);
  if (body != nullptr) {
    curl.easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  } else if (std::string_view(method) == "GET") {
    curl.easy_setopt(c, CURLOPT_HTTPGET, 1L);
  }
  BodySink sink{.body = &a.body, .max = options_.max_response_bytes};
  curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody);
  curl.easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl.easy_setopt(c, CURLOPT_HEADERFUNCTION, onHeader);
  curl.easy_setopt(c, CURLOPT_HEADERDATA, &a.retry_after);
  // TLS: the cluster CA (file or bytes), optionally a client certificate.
  if (!config_.ca_file.empty()) curl.easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  if (!config_.ca_data.empty()) setBlob(curl, c, CURLOPT_CAINFO_BLOB, config_.ca_data);
  if (config_.insecure_skip_tls_verify) {
    curl.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!config_.client_cert_file.empty()) {
    curl.easy_setopt(c, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  }
  if (!config_.client_cert_data.empty())
    setBlob(curl, c, CURLOPT_SSLCERT_BLOB, config_.client_cert_data);
  if (!config_.client_key_file.empty()) {
    curl.easy_setopt(c, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  }
  if (!config_.client_key_data.empty())
    setBlob(curl, c, CURLOPT_SSLKEY_BLOB, config_.client_key_data);

  const CURLcode rc = curl.easy_perform(c);
  curl.easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);  // `h` dies at return
  if (rc != CURLE_OK) {
    sent = !notSent(rc);
    if (rc == CURLE_ABORTED_BY_CALLBACK) return noAnswer(method, url, "cancelled (shutting down)");
    if (sink.over) {
      final_answer = true;  // the same server would send the same again
      return noAnswer(method, url,
                      fmt::format("the answer is larger than the client's cap of {} bytes "
                                  "(ClientOptions::max_response_bytes); dropped",
                                  options_.max_response_bytes));
    }
    return noAnswer(method, url, curl.easy_strerror(rc));
  }
  curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.status);
  sent = true;
  return a;
}

}  // namespace rdmanet::kube
