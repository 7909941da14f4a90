#include "common/json/json_access.h"

#include <fmt/format.h>

#include <cmath>

namespace rdmanet {

using nlohmann::json;

namespace {

Error outOfRange(std::string_view key, auto value, int64_t lo, int64_t hi) {
  return makeError(ErrorCode::kInvalidConfig,
                   fmt::format("\"{}\" is {}, out of range {}..{}", key, value, lo, hi));
}

// What an error calls the member `key`: its `path` when one was given.
std::string_view errorName(std::string_view key, std::string_view path) {
  return path.empty() ? key : path;
}

}  // namespace

Error jsonTypeError(std::string_view key, std::string_view want) {
  return makeError(ErrorCode::kInvalidConfig, fmt::format("\"{}\" must be {}", key, want));
}

const json* jsonMember(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::string> asString(const json& v, std::string_view key) {
  if (!v.is_string()) return jsonTypeError(key, "a string");
  return v.get<std::string>();
}

Result<bool> asBool(const json& v, std::string_view key) {
  if (!v.is_boolean()) return jsonTypeError(key, "a boolean");
  return v.get<bool>();
}

Result<int64_t> asInt(const json& v, std::string_view key, int64_t lo, int64_t hi) {
  int64_t n = 0;
  if (v.is_number_unsigned()) {
    // Above INT64_MAX it cannot be converted; compare it unsigned first.
    const uint64_t u = v.get<uint64_t>();
    if (hi < 0 || u > static_cast<uint64_t>(hi)) return outOfRange(key, u, lo, hi);
    n = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    n = v.get<int64_t>();
  } else {
    return jsonTypeError(key, "an integer");
  }
  if (n < lo || n > hi) return outOfRange(key, n, lo, hi);
  return n;
}

Result<std::vector<std::string>> asStringArray(const json& v, std::string_view key) {
  if (!v.is_array()) return jsonTypeError(key, "an array of strings");
  std::vector<std::string> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    RDMANET_ASSIGN_OR_RETURN(std::string s, asString(v[i], fmt::format("{}[{}]", key, i)));
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::optional<std::string>> optString(const json& obj, std::string_view key,
                                             std::string_view path) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return std::optional<std::string>();
  RDMANET_ASSIGN_OR_RETURN(std::string s, asString(*v, errorName(key, path)));
  return std::optional<std::string>(std::move(s));
}

Result<std::optional<bool>> optBool(const json& obj, std::string_view key, std::string_view path) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return std::optional<bool>();
  RDMANET_ASSIGN_OR_RETURN(bool b, asBool(*v, errorName(key, path)));
  return std::optional<bool>(b);
}

Result<std::optional<int64_t>> optInt(const json& obj, std::string_view key, int64_t lo,
                                      int64_t hi) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return std::optional<int64_t>();
  RDMANET_ASSIGN_OR_RETURN(int64_t n, asInt(*v, key, lo, hi));
  return std::optional<int64_t>(n);
}

Result<std::optional<double>> optNumber(const json& obj, std::string_view key, double lo,
                                        double hi) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return std::optional<double>();
  if (!v->is_number()) return jsonTypeError(key, "a number");
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("\"{}\" is {}, out of range {}..{}", key, d, lo, hi));
  }
  return std::optional<double>(d);
}

Result<const json*> optObject(const json& obj, std::string_view key, std::string_view path) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return static_cast<const json*>(nullptr);
  if (!v->is_object()) return jsonTypeError(errorName(key, path), "an object");
  return v;
}

Result<const json*> optArray(const json& obj, std::string_view key, std::string_view path) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return static_cast<const json*>(nullptr);
  if (!v->is_array()) return jsonTypeError(errorName(key, path), "an array");
  return v;
}

}  // namespace rdmanet
