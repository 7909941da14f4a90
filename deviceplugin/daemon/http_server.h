#pragma once
// A minimal HTTP/1.1 server for /metrics, /healthz and /readyz: GET only, one request per
// connection (Connection: close), served from one thread. Enough for Prometheus scrapes and
// kubelet probes; nothing else should be pointed at it.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/base/result.h"
#include "common/os/watch.h"

namespace rdmanet::dp {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body{};
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& path)>;
  // `addr` is "[HOST]:PORT" ("" host = all addresses; port 0 picks a free one), IPv4 or
  // "[v6]:PORT". Error 7 for a bad address, 5 when it cannot listen.
  static Result<std::unique_ptr<HttpServer>> start(const std::string& addr, Handler handler);
  ~HttpServer();
  int port() const { return port_; }

 private:
  HttpServer(Fd listener, int port, Handler handler, Wakeup stop);
  void loop();
  void serveOne(int fd);

  Fd listener_;
  int port_;
  Handler handler_;
  Wakeup stop_;
  std::thread thread_;
};

}  // namespace rdmanet::dp
