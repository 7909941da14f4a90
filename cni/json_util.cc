#include "cni/json_util.h"

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

Error typeError(std::string_view key, std::string_view want) {
  return makeError(ErrorCode::kInvalidConfig, fmt::format("\"{}\" must be {}", key, want));
}

namespace {
const json* member(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}
}  // namespace

Result<std::optional<std::string>> optString(const json& obj, std::string_view key) {
  const json* v = member(obj, key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return typeError(key, "a string");
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::optional<bool>> optBool(const json& obj, std::string_view key) {
  const json* v = member(obj, key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return typeError(key, "a boolean");
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<int64_t>> optInt(const json& obj, std::string_view key, int64_t lo,
                                      int64_t hi) {
  const json* v = member(obj, key);
  if (v == nullptr) return std::optional<int64_t>();
  int64_t n = 0;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) {
      return makeError(ErrorCode::kInvalidConfig,
                       fmt::format("\"{}\" is {}, out of range {}..{}", key, u, lo, hi));
    }
    n = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    n = v->get<int64_t>();
  } else {
    return typeError(key, "an integer");
  }
  if (n < lo || n > hi) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("\"{}\" is {}, out of range {}..{}", key, n, lo, hi));
  }
  return std::optional<int64_t>(n);
}

Result<const json*> optObject(const json& obj, std::string_view key) {
  const json* v = member(obj, key);
  if (v == nullptr) return static_cast<const json*>(nullptr);
  if (!v->is_object()) return typeError(key, "an object");
  return v;
}

Result<const json*> optArray(const json& obj, std::string_view key) {
  const json* v = member(obj, key);
  if (v == nullptr) return static_cast<const json*>(nullptr);
  if (!v->is_array()) return typeError(key, "an array");
  return v;
}

std::string dumpJson(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace rdmanet::cni
