#include "common/json/json_fields.h"

#include <fmt/format.h>

namespace rdmanet {

using nlohmann::json;

Error invalidConfig(std::string msg) {
  return makeError(ErrorCode::kInvalidConfig, std::move(msg));
}

Error invalidAt(std::string_view where, std::string_view what) {
  return invalidConfig(fmt::format("{}: {}", where, what));
}

Error missing(std::string_view path) {
  return invalidConfig(fmt::format("\"{}\" is required", path));
}

Result<std::string> reqStringAt(const json& obj, std::string_view key, std::string_view path) {
  const json* v = jsonMember(obj, key);
  if (v == nullptr) return missing(path);
  return asString(*v, path);
}

namespace {

// "\"a\", \"b\", \"c\"".
std::string quotedWords(std::span<const std::string_view> words) {
  std::string out;
  for (std::string_view w : words) out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", w);
  return out;
}

}  // namespace

Error notOneOf(std::string_view key, std::string_view word,
               std::span<const std::string_view> words) {
  return invalidConfig(
      fmt::format("\"{}\" is \"{}\", not one of {}", key, word, quotedWords(words)));
}

Error notOneOfAt(std::string_view path, std::string_view word,
                 std::span<const std::string_view> words) {
  return invalidAt(path, fmt::format("\"{}\" is not one of {}", word, quotedWords(words)));
}

}  // namespace rdmanet
