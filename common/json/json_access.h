#pragma once
// Typed, non-throwing access to JSON that came from outside (a netconf, a delegate's result, the
// device plugin's config, a kubeconfig): the one way rdmanet reads a field of a given type. A
// wrong type or range is error 7 (kInvalidConfig, CNI's "invalid JSON content") whose message
// names the key, so a bad document always explains itself:
//   "<key>" must be a string
//   "<key>" is 70000, out of range 0..65535
// `key` is whatever names the field to the reader: a member name ("mtu") or a path
// ("resourceList[0].rdmaHcaMax", "users[u].user.token").

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"

namespace rdmanet {

// Error 7: "\"<key>\" must be <want>" (want: "a string", "an array of CIDR strings", ...).
Error jsonTypeError(std::string_view key, std::string_view want);

// The member `key` of `obj`; nullptr when `obj` is not an object or the member is absent or null.
const nlohmann::json* jsonMember(const nlohmann::json& obj, std::string_view key);

// A value that is there, of the wanted type; error 7 naming `key` otherwise.
Result<std::string> asString(const nlohmann::json& v, std::string_view key);
Result<bool> asBool(const nlohmann::json& v, std::string_view key);
// An integer in [lo, hi]; floats and strings are rejected (like Go's encoding/json into int).
Result<int64_t> asInt(const nlohmann::json& v, std::string_view key, int64_t lo, int64_t hi);
// An array of strings; an element of another type is named "<key>[i]".
Result<std::vector<std::string>> asStringArray(const nlohmann::json& v, std::string_view key);

// Members of `obj`: absent or null is nullopt (nullptr for the object and array forms); present
// with the wrong type, error 7 naming `key`.
Result<std::optional<std::string>> optString(const nlohmann::json& obj, std::string_view key);
Result<std::optional<bool>> optBool(const nlohmann::json& obj, std::string_view key);
Result<std::optional<int64_t>> optInt(const nlohmann::json& obj, std::string_view key, int64_t lo,
                                      int64_t hi);
Result<const nlohmann::json*> optObject(const nlohmann::json& obj, std::string_view key);
Result<const nlohmann::json*> optArray(const nlohmann::json& obj, std::string_view key);

}  // namespace rdmanet
