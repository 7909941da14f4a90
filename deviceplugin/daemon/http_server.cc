#include "deviceplugin/daemon/http_server.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <fmt/format.h>

#include <charconv>
#include <string_view>
#include <vector>

#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

std::string_view reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

Error badAddr(std::string_view what) {
  return makeError(ErrorCode::kInvalidConfig, fmt::format("--metrics-addr: {}", what));
}

// "[HOST]:PORT" in our syntax (validated here, so the message names the flag) to civetweb's
// listening_ports syntax: "PORT" (all IPv4 addresses), "a.b.c.d:PORT" or "[v6]:PORT".
Result<std::string> listeningPort(const std::string& addr) {
  auto colon = addr.rfind(':');
  if (colon == std::string::npos) return badAddr(fmt::format("\"{}\" is not [HOST]:PORT", addr));
  std::string host = addr.substr(0, colon);
  int port = -1;
  std::string_view ps = std::string_view(addr).substr(colon + 1);
  auto [p, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), port);
  if (ec != std::errc() || p != ps.data() + ps.size() || port < 0 || port > 65535) {
    return badAddr(fmt::format("\"{}\" has no valid port", addr));
  }
  if (host.empty()) return std::to_string(port);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    in6_addr a6{};
    if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a6) != 1) {
      return badAddr(fmt::format("bad host {}", host));
    }
    return fmt::format("{}:{}", host, port);
  }
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) != 1) return badAddr(fmt::format("bad host {}", host));
  return fmt::format("{}:{}", host, port);
}

int logMessage(const mg_connection*, const char* message) {
  logger(Component::kMetrics)->debug("http: {}", message);
  return 1;  // handled: civetweb writes no log of its own
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& addr, Handler handler,
                                                      const HttpLimits& limits) {
  RDMANET_ASSIGN_OR_RETURN(const std::string ports, listeningPort(addr));
  // No document_root: civetweb serves no files, only the handler below. No linger timeout:
  // SO_LINGER 0 would reset the connection and drop a reply still in the socket buffer.
  const std::pair<const char*, std::string> settings[] = {
      {"listening_ports", ports},
      {"num_threads", std::to_string(limits.workers)},
      {"connection_queue", std::to_string(limits.queue)},
      {"listen_backlog", std::to_string(limits.queue)},
      {"request_timeout_ms", std::to_string(limits.timeout.count())},
      {"enable_keep_alive", "no"},
      // Each worker holds a request buffer of this size from the start: civetweb's 16 KiB
      // default is 16 times what a GET line and a few headers need (Prometheus's and kubelet's
      // are under 1 KiB); civetweb answers a larger one 400.
      {"max_request_size", std::to_string(limits.max_request_bytes)},
  };
  std::vector<const char*> options;
  for (const auto& [key, value] : settings) {
    options.push_back(key);
    options.push_back(value.c_str());
  }
  options.push_back(nullptr);
  mg_callbacks callbacks{};
  callbacks.log_message = logMessage;
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(handler)));
  mg_init_library(0);
  mg_init_data init{
      .callbacks = &callbacks, .user_data = server.get(), .configuration_options = options.data()};
  char text[256] = {};
  unsigned code = 0;
  mg_error_data error{.code = &code, .text = text, .text_buffer_size = sizeof(text)};
  server->ctx_ = mg_start2(&init, &error);
  if (server->ctx_ == nullptr) {
    mg_exit_library();
    return makeError(ErrorCode::kIoFailure, fmt::format("cannot listen on {}: {}", addr, text));
  }
  // Every path: the handler answers 404 for what it does not know.
  mg_set_request_handler(server->ctx_, "**", &HttpServer::serve, server.get());
  mg_server_port bound[1] = {};
  if (mg_get_server_ports(server->ctx_, 1, bound) == 1) server->port_ = bound[0].port;
  return server;
}

HttpServer::~HttpServer() {
  if (ctx_ != nullptr) {
    mg_stop(ctx_);
    mg_exit_library();
  }
}

int HttpServer::serve(mg_connection* conn, void* self) {
  const auto& server = *static_cast<const HttpServer*>(self);
  const mg_request_info* req = mg_get_request_info(conn);
  const std::string_view method = req->request_method ? req->request_method : "";
  HttpResponse resp;
  if (method != "GET" && method != "HEAD") {
    resp = {405, "text/plain", "only GET\n"};
  } else {
    resp = server.handler_(req->local_uri ? req->local_uri : "/");
  }
  const std::string head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n",
      resp.status, reason(resp.status), resp.content_type, resp.body.size());
  // A client that stops reading fails these after the timeout; nothing else to do then.
  if (mg_write(conn, head.data(), head.size()) > 0 && method != "HEAD") {
    (void)mg_write(conn, resp.body.data(), resp.body.size());
  }
  return resp.status;
}

}  // namespace rdmanet::dp
