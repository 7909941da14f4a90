#include "common/kube/api_status.h"

#include <fmt/format.h>

#include "common/base/enum_names.h"
#include "common/json/json_fields.h"

namespace rdmanet::kube {

namespace {

constexpr EnumName<StatusOutcome> kOutcomes[] = {{"Success", StatusOutcome::kSuccess},
                                                 {"Failure", StatusOutcome::kFailure}};

}  // namespace

Result<ApiStatus> decodeApiStatus(const nlohmann::json& doc) {
  if (!doc.is_object()) return jsonTypeError("Status", "an object");
  RDMANET_ASSIGN_OR_RETURN(std::optional<std::string> kind, optString(doc, "kind"));
  if (kind != "Status") {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("\"kind\" is {}, not \"Status\"",
                                 kind ? fmt::format("\"{}\"", *kind) : std::string("absent")));
  }
  ApiStatus out;
  RDMANET_ASSIGN_OR_RETURN(out.status, optEnum<StatusOutcome>(doc, "status", kOutcomes));
  RDMANET_ASSIGN_OR_RETURN(out.code, intOr<int64_t>(doc, "code", 0, 0, INT32_MAX));
  RDMANET_ASSIGN_OR_RETURN(auto reason, optString(doc, "reason"));
  out.reason = reason.value_or("");
  RDMANET_ASSIGN_OR_RETURN(auto message, optString(doc, "message"));
  out.message = message.value_or("");
  return out;
}

}  // namespace rdmanet::kube
