// libFuzzer target over the daemon's HTTP request head parser (deviceplugin/daemon/http_wire.h):
// the input is what a client of the metrics port sent so far. Invariants: no crash; a complete
// head has a method and a path without spaces or a query; more bytes never undo a complete head
// (the server parses again as bytes arrive); "too large" only past the limit.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "deviceplugin/daemon/http_wire.h"

using namespace rdmanet::dp;

namespace {
constexpr size_t kMax = 4096;  // small, so that the fuzzer reaches the limit
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  RequestHead head;
  const HeadState st = parseRequestHead(in, kMax, &head);
  if (st == HeadState::kTooLarge && size <= kMax) __builtin_trap();
  if (st != HeadState::kComplete) return 0;
  if (head.method.empty() || head.method.find(' ') != std::string::npos) __builtin_trap();
  if (head.path.find_first_of(" ?") != std::string::npos) __builtin_trap();
  RequestHead again;
  const std::string more = std::string(in) + "GET / HTTP/1.1\r\n\r\n";
  if (parseRequestHead(more, kMax + more.size(), &again) != HeadState::kComplete ||
      again.method != head.method || again.path != head.path) {
    __builtin_trap();
  }
  return 0;
}
