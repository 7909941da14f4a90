#include "common/kube/api_error.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/kube/api_status.h"

namespace rdmanet::kube {

std::string hint(const Error& e) {
  if (isNoAnswer(e)) return "the API server did not answer (down, unreachable or slow)";
  if (isUnauthorized(e)) return "the credentials were refused (expired or rotated token?)";
  if (isForbidden(e)) return "RBAC does not allow it (check the ClusterRole)";
  if (isNotFound(e)) return "the object does not exist";
  if (isConflict(e)) return "it changed meanwhile";
  if (isInvalid(e)) return "the API server found it invalid";
  if (isTooManyRequests(e)) return "the API server is throttling";
  if (isServerError(e)) return "the API server failed";
  return "";
}

Error statusError(const std::string& method, const std::string& path, long status,
                  const std::string& body) {
  std::string reason, message;
  // A metav1.Status ({"kind":"Status","reason":"Conflict","message":...}) when the API server
  // itself answered; proxies and load balancers may send anything else (then the HTTP status
  // alone says what happened).
  const auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (auto st = decodeApiStatus(j); st.ok()) {
    reason = st->reason;
    message = st->message;
  }
  std::string msg = fmt::format("{} {}: HTTP {}", method, path, status);
  if (!reason.empty()) msg += " " + reason;
  if (!message.empty()) msg += ": " + message;
  Error e = makeError(ErrorCode::kKubeApiFailure, std::move(msg), body.substr(0, 1024));
  e.http_status = static_cast<int>(status);
  return e;
}

}  // namespace rdmanet::kube
