#pragma once
// The API server's metav1.Status, the body of its error answers
//   {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "...",
//    "reason": "Conflict", "code": 409}
// as a typed, non-throwing view. Proxies and load balancers in front of the API server may
// answer with anything else; that is an error here, and the caller falls back to the HTTP status.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/base/result.h"

namespace rdmanet::kube {

// Its `status` field.
enum class StatusOutcome { kSuccess, kFailure };

struct ApiStatus {
  std::optional<StatusOutcome> status{};  // absent: nullopt
  int64_t code = 0;                       // the HTTP status it reports (absent: 0)
  std::string reason{};                   // CamelCase ("Conflict", "NotFound"); absent: ""
  std::string message{};
};

// Error 7 when `doc` is not an object of kind "Status", or a field has the wrong type or value
// (the message names it: "\"status\" is \"Maybe\", not one of \"Success\", \"Failure\"").
Result<ApiStatus> decodeApiStatus(const nlohmann::json& doc);

}  // namespace rdmanet::kube
