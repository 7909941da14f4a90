#pragma once
// The typed JSON helper (json_access.h) for objects read field by field, as the Kubernetes
// object views (common/kube/resource_claim.h, resource_slice.h, api_status.h) and the device
// plugin's config read them: members deep in a document, named by their path in errors; members
// that must be there; words that name an enum's value; and the one constructor of error 7 for a
// value of the right type that is still wrong.

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/enum_names.h"
#include "common/base/result.h"
#include "common/json/json_access.h"

namespace rdmanet {

// Error 7: "<where>: <what>" ("resourceList[0].resourceName: is required", "DRA device \"x\": 40
// attributes, at most 32 are allowed"). Every reader of an outside document builds its "this
// value is wrong" errors with it, so a message always starts with what it is about.
Error invalidAt(std::string_view where, std::string_view what);

// Members of `obj` looked up by `key` and named by `path` in errors
// ("status.allocation.devices.results[0].adminAccess"): absent or null is nullopt (nullptr), the
// wrong type error 7 naming `path`.
Result<std::optional<std::string>> optStringAt(const nlohmann::json& obj, std::string_view key,
                                               std::string_view path);
Result<std::optional<bool>> optBoolAt(const nlohmann::json& obj, std::string_view key,
                                      std::string_view path);
Result<const nlohmann::json*> optObjectAt(const nlohmann::json& obj, std::string_view key,
                                          std::string_view path);
Result<const nlohmann::json*> optArrayAt(const nlohmann::json& obj, std::string_view key,
                                         std::string_view path);

// Error 7 "\"<path>\" is required".
Error missing(std::string_view path);
// A string member that must be there: `missing(path)` when absent or null.
Result<std::string> reqStringAt(const nlohmann::json& obj, std::string_view key,
                                std::string_view path);

// Error 7 "\"<key>\" is \"<word>\", not one of \"a\", \"b\"".
Error notOneOf(std::string_view key, std::string_view word,
               std::span<const std::string_view> words);

// A string member of `obj` that names one of `table`'s values: nullopt when absent or null;
// error 7 naming `key` for another type, or (notOneOf) for a word not in `table`.
template <typename E>
Result<std::optional<E>> optEnum(const nlohmann::json& obj, std::string_view key,
                                 std::span<const EnumName<E>> table) {
  RDMANET_ASSIGN_OR_RETURN(std::optional<std::string> word, optString(obj, key));
  if (!word) return std::optional<E>();
  if (std::optional<E> v = enumOf<E>(table, *word)) return v;
  std::vector<std::string_view> words;
  for (const auto& e : table) words.push_back(e.name);
  return notOneOf(key, *word, words);
}

}  // namespace rdmanet
