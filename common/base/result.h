#pragma once
// Error and Result<T>: how every fallible function in rdmanet reports failure.
//
// The error code is chosen where the cause is known and follows the CNI specification's
// numbering (see ErrorCode), so the CNI binary can print it unchanged and the device plugin can
// map it at its gRPC boundary. Callers add context with Error::context(), never a new code.

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace rdmanet {

// CNI spec error codes (the specification's "Error" section) plus the plugin-specific range (100+).
enum class ErrorCode : int {
  kIncompatibleVersion = 1,   // cniVersion not supported
  kUnsupportedField = 2,      // a field value we do not implement
  kContainerUnknown = 3,      // ADD: the netns does not exist
  kInvalidEnv = 4,            // missing or invalid CNI_* environment variable
  kIoFailure = 5,             // stdin/stdout, state directory I/O
  kDecodeFailure = 6,         // JSON that does not parse
  kInvalidConfig = 7,         // JSON that parses but is invalid
  kTryAgainLater = 11,        // device locked, interrupted dump after retries
  kPluginNotAvailable = 50,   // STATUS: cannot serve ADD
  kLimitedConnectivity = 51,  // STATUS: PF or RDMA port down
  kDeviceNotFound = 100,      // PCI function, netdev or RDMA device missing
  kNetlinkFailure = 101,      // a netlink request failed
  kNetnsFailure = 102,        // entering or opening a network namespace failed
  kRdmaFailure = 103,         // RDMA netlink / verbs failure
  kKubeApiFailure = 104,      // a Kubernetes API request failed (see Error::http_status)
  kInternal = 999,            // anything unexpected
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string msg;      // one line, says what failed
  std::string details;  // optional longer explanation
  int sys_errno = 0;    // the errno behind it, when a syscall or netlink request failed
  int http_status = 0;  // the HTTP status behind it, when a Kubernetes API request was answered

  // Returns a copy whose message reads "<what>: <msg>".
  Error context(std::string_view what) const;
};

Error makeError(ErrorCode code, std::string msg, std::string details = {});
// An error for a failed syscall or netlink request: "<msg>: <strerror(err)>", sys_errno = err.
// `err` may be given positive or negative (netlink answers -errno).
Error errnoError(ErrorCode code, int err, std::string msg);

// A value or an Error. Deliberately small: C++20 has no std::expected.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(const T& v) : v_(std::in_place_index<0>, v) {}          // NOLINT: implicit by design
  Result(T&& v) : v_(std::in_place_index<0>, std::move(v)) {}    // NOLINT
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }
  template <typename U>
  T valueOr(U&& fallback) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : err_(std::move(e)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

using Status = Result<void>;
inline Status okStatus() { return {}; }

}  // namespace rdmanet

#define RDMANET_CONCAT_INNER_(a, b) a##b
#define RDMANET_CONCAT_(a, b) RDMANET_CONCAT_INNER_(a, b)

// Returns the error of `expr` (a Result) from the enclosing function.
#define RDMANET_RETURN_IF_ERROR(expr) \
  do {                                \
    auto&& rdmanet_r_ = (expr);       \
    if (!rdmanet_r_.ok()) {           \
      return rdmanet_r_.error();      \
    }                                 \
  } while (0)

// `RDMANET_ASSIGN_OR_RETURN(auto x, f());` declares x from f()'s value or returns its error.
#define RDMANET_ASSIGN_OR_RETURN(lhs, expr) \
  RDMANET_ASSIGN_OR_RETURN_IMPL_(RDMANET_CONCAT_(rdmanet_res_, __LINE__), lhs, expr)
// `tmp` is a name being declared and `lhs` a declaration ("auto x"): neither can be wrapped in
// parentheses, so bugprone-macro-parentheses is silenced on exactly those two lines.
#define RDMANET_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)        \
  auto tmp = (expr); /* NOLINT(bugprone-macro-parentheses) */ \
  if (!(tmp).ok()) {                                          \
    return (tmp).error();                                     \
  }                                                           \
  lhs = std::move(tmp).value() /* NOLINT(bugprone-macro-parentheses) */
