#include "common/base/result.h"

#include <cstdlib>
#include <cstring>

namespace rdmanet {

Error Error::context(std::string_view what) const {
  Error e = *this;
  e.msg = std::string(what) + ": " + msg;
  return e;
}

Error makeError(ErrorCode code, std::string msg, std::string details) {
  return Error{.code = code, .msg = std::move(msg), .details = std::move(details)};
}

Error errnoError(ErrorCode code, int err, std::string msg) {
  const int e = std::abs(err);
  msg.append(": ").append(std::strerror(e));
  return Error{.code = code, .msg = std::move(msg), .details = {}, .sys_errno = e};
}

}  // namespace rdmanet
