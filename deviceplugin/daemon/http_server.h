#pragma once
// The daemon's HTTP endpoint (/metrics, /healthz, /readyz): one thread that polls the listener
// and every connection, and one render thread for the slow paths (/metrics).
//
// The port listens on the node's network, so anyone who reaches it is a client, and a probe that
// goes unanswered gets the daemon restarted by kubelet. What the design holds against:
// - Probes first. Every path but the slow ones (the probes, 404s) is answered on the server's
//   thread as soon as its request is in: there is no pool of workers to wait for and no queue to
//   stand in, so idle, trickling and non-reading clients, however many, delay a probe by one
//   turn of the loop.
// - Total deadlines. A connection gets `request_timeout` from accept to the end of its request
//   head and `reply_timeout` from then to the last byte of its reply (a wait for a render
//   included), however steadily it reads: a reader that drips a few bytes at a time is cut off
//   at its deadline, with a reset, so the kernel drops the rest of its reply too. (civetweb 1.15,
//   Debian 12's and this server's predecessor, has a deadline per write only, which every byte a
//   reader takes starts again: a slow-drip reader held one of its few workers for good, and 16 of
//   them every worker, probes included.)
// - One render for many scrapes. A slow path is rendered on the render thread, one path at a
//   time, and the reply is shared: by every request that waits for it, and by those that arrive
//   within `render_max_age` of its start. N scrapers cost one render and hold one copy of the
//   body between them (a 1016-pod /metrics is about 6 MB). It is let go once no connection
//   sends it and it is older than `render_max_age`.
// - A cap on scrapes. At most `max_slow` requests for slow paths at once (waiting for a render
//   or being sent one); the next ones get 503 at once.
// - A cap on connections. At most `max_connections` open; one past it closes the connection
//   that has waited longest for its request (an idle or trickling client), or, when every one
//   is being answered, the new one. A connection holds its fd and at most `max_request_bytes`.
//
// Connections are never kept alive: one request each. GET and HEAD only (405 otherwise); the
// handler sees the path without the query string. The handler is called on the server's thread
// for quick paths and on the render thread for slow ones: it must be thread-safe, and quick
// paths must not block.

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/base/clock.h"
#include "common/base/result.h"

namespace rdmanet::dp {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body{};
};

struct HttpLimits {
  int max_connections = 256;                        // open at once
  std::chrono::milliseconds request_timeout{1000};  // accept to the end of the request head
  std::chrono::milliseconds reply_timeout{10000};   // the request to the reply's last byte
  int max_request_bytes = 4096;  // request line and headers; more is answered 431
  int max_slow = 4;              // slow-path requests at once; more are answered 503
  // A render serves the slow-path requests that arrive within this of its start; 0: only
  // those that wait for it (each later request starts a render of its own).
  std::chrono::milliseconds render_max_age{1000};
};
// The reply deadline is Prometheus's default scrape timeout; kubelet's probes time out at 1 s by
// default (the chart sets 2 s), and are answered in milliseconds.
inline constexpr HttpLimits kHttpLimits{};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& path)>;
  // `addr` is "[HOST]:PORT" ("" host = all IPv4 addresses; port 0 picks a free one), IPv4 or
  // "[v6]:PORT". `slow_paths` are rendered on the render thread, shared and capped (above).
  // Error 7 for a bad address (the message names --metrics-addr), 5 when it cannot listen (port
  // taken, no permission).
  // The time-outs and the render age are measured on `clock` (real time when null), which must
  // outlive the server.
  static Result<std::unique_ptr<HttpServer>> start(const std::string& addr, Handler handler,
                                                   std::set<std::string> slow_paths = {},
                                                   const HttpLimits& limits = kHttpLimits,
                                                   const Clock* clock = nullptr);
  // Closes every connection, waits for the render in progress, if any.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdmanet::dp
