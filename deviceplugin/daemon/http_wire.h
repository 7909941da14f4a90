#pragma once
// The bytes of the daemon's small HTTP/1.1 server (http_server.h): the listening socket, the
// request head and the reply head. Pure functions apart from listenOn().

#include <string>
#include <string_view>

#include "common/base/fd.h"
#include "common/base/result.h"

namespace rdmanet::dp {

// A non-blocking listening TCP socket on "[HOST]:PORT" ("" host = all IPv4 addresses, IPv4 or
// "[v6]", port 0 picks a free one); `*port` gets the port bound. Error 7 for a bad address (the
// message names --metrics-addr), 5 when it cannot listen.
Result<Fd> listenOn(const std::string& addr, int backlog, int* port);

struct RequestHead {
  std::string method;
  std::string path;  // the target without its query string
};

enum class HeadState {
  kIncomplete,  // no blank line yet, within the limit
  kComplete,    // a request line and headers, ending in a blank line
  kTooLarge,    // no blank line within `max_bytes`: answered 431
  kBad,         // not "METHOD TARGET HTTP/x.y": answered 400
};

// Looks at what a client sent so far: `head` is filled when complete.
HeadState parseRequestHead(std::string_view in, size_t max_bytes, RequestHead* head);

// "HTTP/1.1 <status> <reason>" with Content-Type, Content-Length and Connection: close.
std::string replyHead(int status, std::string_view content_type, size_t content_length);

}  // namespace rdmanet::dp
