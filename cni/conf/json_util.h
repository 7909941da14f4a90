#pragma once
// Parsing and printing the CNI's JSON within its limits. Typed access to the parsed document is
// common/json/json_access.h (error 7 naming the key), re-exported here for the CNI's readers, like
// common/json/json_dump.h for its writers.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cni/conf/limits.h"
#include "common/base/result.h"
#include "common/json/json_access.h"
#include "common/json/json_dump.h"

namespace rdmanet::cni {

using json = nlohmann::json;

// Parses text; error 6 with the parser's position on malformed JSON, error 7 naming the limit
// when the text is longer, nests deeper or holds a longer string or key than `limits` allow
// (checked while parsing: a too-deep document is never built).
Result<json> parseJson(std::string_view text, const JsonLimits& limits = kConfigLimits);

// JSON text, invalid UTF-8 replaced (never throws): the one helper of common/json.
using rdmanet::dumpJson;

}  // namespace rdmanet::cni
