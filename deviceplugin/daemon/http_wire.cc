#include "deviceplugin/daemon/http_wire.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/base/enum_names.h"

namespace rdmanet::dp {

namespace {

Error badAddr(std::string_view what) {
  return makeError(ErrorCode::kInvalidConfig, fmt::format("--metrics-addr: {}", what));
}

// The reason phrase of each status the server sends.
std::string_view reason(int status) {
  static constexpr EnumName<int> kReasons[] = {{"OK", 200},
                                               {"Bad Request", 400},
                                               {"Not Found", 404},
                                               {"Method Not Allowed", 405},
                                               {"Request Header Fields Too Large", 431},
                                               {"Internal Server Error", 500},
                                               {"Service Unavailable", 503}};
  return nameOf<int>(kReasons, status, "Error");
}

}  // namespace

Result<Fd> listenOn(const std::string& addr, int backlog, int* port) {
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos) return badAddr(fmt::format("\"{}\" is not [HOST]:PORT", addr));
  const std::string host = addr.substr(0, colon);
  int p = -1;
  const std::string_view ps = std::string_view(addr).substr(colon + 1);
  auto [end, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), p);
  if (ec != std::errc() || end != ps.data() + ps.size() || p < 0 || p > 65535) {
    return badAddr(fmt::format("\"{}\" has no valid port", addr));
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(p));
    if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a6->sin6_addr) != 1) {
      return badAddr(fmt::format("bad host {}", host));
    }
    len = sizeof(*a6);
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(static_cast<uint16_t>(p));
    if (host.empty()) {
      a4->sin_addr.s_addr = htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET, host.c_str(), &a4->sin_addr) != 1) {
      return badAddr(fmt::format("bad host {}", host));
    }
    len = sizeof(*a4);
  }
  Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    return makeError(ErrorCode::kIoFailure, fmt::format("socket: {}", std::strerror(errno)));
  }
  const int one = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 ||
      ::listen(fd.get(), backlog) != 0) {
    return makeError(ErrorCode::kIoFailure,
                     fmt::format("cannot listen on {}: {}", addr, std::strerror(errno)));
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof(bound);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &blen) == 0) {
    *port =
        ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                          : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  }
  return fd;
}

HeadState parseRequestHead(std::string_view in, size_t max_bytes, RequestHead* head) {
  // A blank line ends the head; bare LFs are taken too, as most servers do.
  size_t end = in.find("\r\n\r\n");
  if (end == std::string_view::npos) end = in.find("\n\n");
  if (end == std::string_view::npos || end > max_bytes) {
    return in.size() > max_bytes ? HeadState::kTooLarge : HeadState::kIncomplete;
  }
  std::string_view line = in.substr(0, in.find('\n'));
  if (line.ends_with('\r')) line.remove_suffix(1);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1 ||
      !line.substr(sp2 + 1).starts_with("HTTP/")) {
    return HeadState::kBad;
  }
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  head->method = std::string(line.substr(0, sp1));
  head->path = std::string(target.substr(0, target.find('?')));
  return HeadState::kComplete;
}

std::string replyHead(int status, std::string_view content_type, size_t content_length) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
      status, reason(status), content_type, content_length);
}

}  // namespace rdmanet::dp
