#pragma once
// Typed, non-throwing access to JSON that came from outside (a netconf, a delegate's result, the
// device plugin's config, a kubeconfig): the one way rdmanet reads a field of a given type. A
// wrong type or range is error 7 (kInvalidConfig, CNI's "invalid JSON content") whose message
// names the key, so a bad document always explains itself:
//   "<key>" must be a string
//   "<key>" is 70000, out of range 0..65535
// `key` is whatever names the field to the reader: a member name ("mtu") or a path
// ("resourceList[0].rdmaHcaMax", "users[u].user.token").

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
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

// Members of `obj` looked up by `key`: absent or null is nullopt (nullptr for the object and
// array forms); present with the wrong type, error 7 naming `path`, or `key` when `path` is empty.
// A member deep in a document is named by its path
// ("status.allocation.devices.results[0].adminAccess"), one at the top by its key ("mtu").
Result<std::optional<std::string>> optString(const nlohmann::json& obj, std::string_view key,
                                             std::string_view path = {});
Result<std::optional<bool>> optBool(const nlohmann::json& obj, std::string_view key,
                                    std::string_view path = {});
Result<std::optional<int64_t>> optInt(const nlohmann::json& obj, std::string_view key, int64_t lo,
                                      int64_t hi);
// A number, integer or not, that is finite and in [lo, hi] (a measurement: "rtt_p99_us": 12.5).
Result<std::optional<double>> optNumber(const nlohmann::json& obj, std::string_view key, double lo,
                                        double hi);
// The integer member `key` of `obj` as a T, or `fallback` when it is absent or null; error 7
// naming `key` when it is a float, a string or outside [lo, hi] (by default T's whole range).
// The way to read a number of a document from outside: nlohmann's `value(key, 0)` and
// `get<int>()` convert a float or a wider integer with no check, and a float out of the target's
// range is undefined behaviour (lint.json_numbers refuses them outside common/json).
template <std::integral T>
requires(!std::same_as<T, bool>) Result<T> intOr(
    const nlohmann::json& obj, std::string_view key, T fallback,
    int64_t lo = static_cast<int64_t>(std::numeric_limits<T>::min()),
    int64_t hi = static_cast<int64_t>(std::min<uint64_t>(std::numeric_limits<T>::max(),
                                                         std::numeric_limits<int64_t>::max()))) {
  RDMANET_ASSIGN_OR_RETURN(std::optional<int64_t> n, optInt(obj, key, lo, hi));
  return n ? static_cast<T>(*n) : fallback;
}

Result<const nlohmann::json*> optObject(const nlohmann::json& obj, std::string_view key,
                                        std::string_view path = {});
Result<const nlohmann::json*> optArray(const nlohmann::json& obj, std::string_view key,
                                       std::string_view path = {});

}  // namespace rdmanet
