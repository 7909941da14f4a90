#include "common/net/ip.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <sys/socket.h>

#include <charconv>

namespace rdmanet {
namespace {

Error badIp(std::string_view text) {
  return makeError(ErrorCode::kInvalidConfig, fmt::format("invalid IP address \"{}\"", text));
}

}  // namespace

Result<IpAddress> IpAddress::parse(std::string_view text) {
  // inet_pton needs a NUL-terminated string; bound the length first so untrusted input cannot
  // make us copy much (the longest IPv6 text form is 45 characters).
  if (text.empty() || text.size() > 45) return badIp(text);
  const std::string s(text);
  IpAddress ip;
  if (s.find(':') != std::string::npos) {
    if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) != 1) return badIp(text);
    ip.family = AF_INET6;
  } else {
    if (inet_pton(AF_INET, s.c_str(), ip.bytes.data()) != 1) return badIp(text);
    ip.family = AF_INET;
  }
  return ip;
}

std::string IpAddress::str() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family != AF_INET && family != AF_INET6) return "<invalid>";
  inet_ntop(family, bytes.data(), buf, sizeof(buf));
  return buf;
}

bool IpAddress::isV4() const { return family == AF_INET; }

Result<IpPrefix> IpPrefix::parse(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("invalid IP prefix \"{}\": missing /length", text));
  }
  RDMANET_ASSIGN_OR_RETURN(IpAddress addr, IpAddress::parse(text.substr(0, slash)));
  const std::string_view len_text = text.substr(slash + 1);
  int len = -1;
  const auto [ptr, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
  const int max_len = addr.isV4() ? 32 : 128;
  if (len_text.empty() || ec != std::errc() || ptr != len_text.data() + len_text.size() ||
      len < 0 || len > max_len) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("invalid IP prefix \"{}\": length must be 0..{}", text, max_len));
  }
  return IpPrefix{.address = addr, .prefix_len = len};
}

std::string IpPrefix::str() const { return fmt::format("{}/{}", address.str(), prefix_len); }

}  // namespace rdmanet
