#pragma once
// Typed, non-throwing access to untrusted JSON. Every wrong type is error 7 naming the key, so
// a bad netconf or result always explains itself.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cni/limits.h"
#include "common/base/result.h"

namespace rdmanet::cni {

using json = nlohmann::json;

// Parses text; error 6 with the parser's position on malformed JSON, error 7 naming the limit
// when the text is longer, nests deeper or holds a longer string or key than `limits` allow
// (checked while parsing: a too-deep document is never built).
Result<json> parseJson(std::string_view text, const JsonLimits& limits = kConfigLimits);

Error typeError(std::string_view key, std::string_view want);
// Absent or null: nullopt. Wrong type: error 7 "<key> must be a <type>".
Result<std::optional<std::string>> optString(const json& obj, std::string_view key);
Result<std::optional<bool>> optBool(const json& obj, std::string_view key);
// An integer in [lo, hi]; floats and strings are rejected (like Go's encoding/json into int).
Result<std::optional<int64_t>> optInt(const json& obj, std::string_view key, int64_t lo,
                                      int64_t hi);
// An object member that must be an object when present.
Result<const json*> optObject(const json& obj, std::string_view key);
Result<const json*> optArray(const json& obj, std::string_view key);

// JSON text of `j` compact, with invalid UTF-8 replaced (never throws).
std::string dumpJson(const json& j, int indent = -1);

}  // namespace rdmanet::cni
