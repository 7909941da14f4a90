#pragma once
// The daemon's HTTP endpoint (/metrics, /healthz, /readyz) on civetweb (Debian's
// libcivetweb-dev): a pool of worker threads, one connection each, and a deadline on every
// read and write, so no client can hold the probes hostage.
//
// Sizing (kHttpLimits): a port scanner's idle connections, clients that send their headers one
// byte at a time and scrapers that stop reading a large /metrics reply each hold one worker
// until civetweb's deadline drops them: an idle or slow-header client after one deadline for the
// whole request, a non-reader after a few (each write of the reply has its own: 2 s measured
// with a 500 ms deadline). With 128 workers, 75 such connections at once (the test in
// tests/deviceplugin/daemon/http_stall_test.cc) leave workers free, so /healthz is answered at
// once; past the worker count, new connections wait in the accept queue until a deadline frees
// a worker. Connections are never kept alive: one request each.
//
// GET and HEAD only (405 otherwise); the handler sees the path without the query string.
// The handler is called concurrently from several workers: it must be thread-safe.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/base/result.h"

struct mg_context;
struct mg_connection;

namespace rdmanet::dp {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body{};
};

struct HttpLimits {
  int workers;                        // connections served at once
  int queue;                          // accepted connections waiting for a worker
  std::chrono::milliseconds timeout;  // to read a whole request; to write each part of a reply
  int max_request_bytes = 4096;       // request line and headers; civetweb answers more 400
};
inline constexpr HttpLimits kHttpLimits{
    .workers = 128, .queue = 128, .timeout = std::chrono::milliseconds(5000)};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& path)>;
  // `addr` is "[HOST]:PORT" ("" host = all IPv4 addresses; port 0 picks a free one), IPv4 or
  // "[v6]:PORT". Error 7 for a bad address (the message names --metrics-addr), 5 when it
  // cannot listen (port taken, no permission).
  static Result<std::unique_ptr<HttpServer>> start(const std::string& addr, Handler handler,
                                                   const HttpLimits& limits = kHttpLimits);
  // Stops accepting, waits for the workers to finish their current connection (about 2 s:
  // civetweb's threads notice the stop on their next poll).
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }

 private:
  explicit HttpServer(Handler handler) : handler_(std::move(handler)) {}
  static int serve(mg_connection* conn, void* self);

  Handler handler_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
};

}  // namespace rdmanet::dp
