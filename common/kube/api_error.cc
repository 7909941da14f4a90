#include "common/kube/api_error.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

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
  // itself answered; proxies and load balancers may send anything else.
  const auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  // Every field is checked for its type first: json::value() throws when a key holds another type.
  const auto field = [&](const char* key) -> std::string {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (j.is_object() && field("kind") == "Status") {
    reason = field("reason");
    message = field("message");
  }
  std::string msg = fmt::format("{} {}: HTTP {}", method, path, status);
  if (!reason.empty()) msg += " " + reason;
  if (!message.empty()) msg += ": " + message;
  Error e = makeError(ErrorCode::kKubeApiFailure, std::move(msg), body.substr(0, 1024));
  e.http_status = static_cast<int>(status);
  return e;
}

}  // namespace rdmanet::kube
