#include "deviceplugin/daemon/http_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

namespace rdmanet::dp {

namespace {

constexpr size_t kMaxRequest = 8192;
constexpr int kIoTimeoutMs = 2000;

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

void writeAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& addr, Handler handler) {
  auto colon = addr.rfind(':');
  if (colon == std::string::npos) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("--metrics-addr: \"{}\" is not [HOST]:PORT", addr));
  }
  std::string host = addr.substr(0, colon);
  int port = -1;
  std::string_view ps = std::string_view(addr).substr(colon + 1);
  auto [p, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), port);
  if (ec != std::errc() || p != ps.data() + ps.size() || port < 0 || port > 65535) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("--metrics-addr: \"{}\" has no valid port", addr));
  }
  bool v6 = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (v6) host = host.substr(1, host.size() - 2);
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, host.c_str(), &a->sin6_addr) != 1) {
      return makeError(ErrorCode::kInvalidConfig, fmt::format("--metrics-addr: bad host {}", host));
    }
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    if (host.empty()) {
      a->sin_addr.s_addr = htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET, host.c_str(), &a->sin_addr) != 1) {
      return makeError(ErrorCode::kInvalidConfig, fmt::format("--metrics-addr: bad host {}", host));
    }
    len = sizeof(*a);
  }
  int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "metrics socket");
  Fd guard(fd);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 16) != 0) {
    return errnoError(ErrorCode::kIoFailure, errno, fmt::format("cannot listen on {}", addr));
  }
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  int bound = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  RDMANET_ASSIGN_OR_RETURN(Wakeup stop, Wakeup::open());
  return std::unique_ptr<HttpServer>(
      new HttpServer(std::move(guard), bound, std::move(handler), std::move(stop)));
}

HttpServer::HttpServer(Fd listener, int port, Handler handler, Wakeup stop)
    : listener_(std::move(listener)),
      port_(port),
      handler_(std::move(handler)),
      stop_(std::move(stop)) {
  thread_ = std::thread([this] { loop(); });
}

HttpServer::~HttpServer() {
  stop_.notify();
  thread_.join();
}

void HttpServer::loop() {
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_.fd(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    int c = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    Fd conn(c);
    serveOne(c);
  }
}

void HttpServer::serveOne(int fd) {
  std::string req;
  char buf[1024];
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < kMaxRequest) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kIoTimeoutMs) <= 0) return;  // a stalled client must not block probes
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  std::string_view line(req.data(),
                        req.find("\r\n") == std::string::npos ? req.size() : req.find("\r\n"));
  HttpResponse resp;
  auto sp1 = line.find(' ');
  auto sp2 = line.find(' ', sp1 == std::string_view::npos ? 0 : sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) {
    resp = {400, "text/plain", "bad request\n"};
  } else if (line.substr(0, sp1) != "GET" && line.substr(0, sp1) != "HEAD") {
    resp = {405, "text/plain", "only GET\n"};
  } else {
    std::string path(line.substr(sp1 + 1, sp2 - sp1 - 1));
    if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
    resp = handler_(path);
  }
  bool head = line.starts_with("HEAD ");
  writeAll(fd, fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
                           "Connection: close\r\n\r\n",
                           resp.status, reason(resp.status), resp.content_type, resp.body.size()));
  if (!head) writeAll(fd, resp.body);
}

}  // namespace rdmanet::dp
