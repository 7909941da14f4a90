#pragma once
// The daemon's HTTP endpoint (/metrics, /healthz, /readyz) on civetweb (Debian's
// libcivetweb-dev): a pool of worker threads, one connection each, and a deadline on every
// read and write, so no client can hold the probes hostage.
//
// Sizing (kHttpLimits): a port scanner's idle connections, clients that send their headers one
// byte at a time and scrapers that stop reading a large /metrics reply each hold one worker
// until civetweb's deadline drops them: an idle or slow-header client after one deadline for the
// whole request, a non-reader after a few (each write of the reply has its own: 2 s measured
// with a 500 ms deadline). Past the worker count, new connections wait in the queue until a
// deadline frees a worker, so a probe that arrives behind Q held or queued connections waits
// ceil((Q + 1 - workers) / workers) deadlines: none behind up to 15, 1 s (under kubelet's 2 s
// probe timeout) behind up to 31, 2 s behind up to 47. A client that keeps reconnecting is
// dropped at workers / deadline = 16 connections a second (128 workers and 5 s, before: 25.6).
// Why so few: civetweb 1.15 starts every worker up front, and each costs ~19 KB resident (its
// touched stack, its connection and request buffer): 128 workers instead of 16 put the daemon at
// 16.3 MB instead of 14.2 (device-plugin mode, 8 devices, bench/dp_scale.sh 1). The test in
// tests/deviceplugin/daemon/http_stall_test.cc opens 75 hostile connections at once: the queue
// drains them within 4 deadlines, and then, with the non-readers still holding workers, the
// probes are answered within 100 ms.
// Connections are never kept alive: one request each.
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
    .workers = 16, .queue = 128, .timeout = std::chrono::milliseconds(1000)};

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
