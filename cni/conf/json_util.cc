#include "cni/conf/json_util.h"

#include <fmt/format.h>

namespace rdmanet::cni {

namespace {

// Thrown from the parser callback to stop at the first limit crossed.
struct LimitExceeded {
  std::string what;
};

}  // namespace

Result<json> parseJson(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("JSON input is {} bytes, above the limit of {} bytes", text.size(),
                                 limits.max_bytes));
  }
  // nlohmann's parser is iterative, but its serialiser, copy and comparison recurse: the depth
  // is bounded here, before a document exists.
  auto check = [&](int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= limits.max_depth) {
      throw LimitExceeded{
          fmt::format("JSON nests deeper than the limit of {} levels", limits.max_depth)};
    }
    if ((event == E::key || event == E::value) && parsed.is_string() &&
        parsed.get_ref<const std::string&>().size() > limits.max_string) {
      throw LimitExceeded{fmt::format(
          "a JSON {} is {} bytes, above the limit of {} bytes", event == E::key ? "key" : "string",
          parsed.get_ref<const std::string&>().size(), limits.max_string)};
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check);
  } catch (const LimitExceeded& e) {
    return makeError(ErrorCode::kInvalidConfig, e.what);
  } catch (const json::parse_error& e) {
    return makeError(ErrorCode::kDecodeFailure, "failed to parse JSON", e.what());
  } catch (const std::exception& e) {
    return makeError(ErrorCode::kDecodeFailure, "failed to parse JSON", e.what());
  }
}

}  // namespace rdmanet::cni
