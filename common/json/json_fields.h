#pragma once
// The typed JSON helper (json_access.h) for objects read field by field, as the Kubernetes
// object views (common/kube/resource_claim.h, resource_slice.h, api_status.h) and the device
// plugin's config read them: members that must be there; words that name an enum's value; and
// the one constructor of error 7 for a value of the right type that is still wrong. (Members deep
// in a document, named by their path in errors, are json_access.h's opt* with a `path`.)

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

// Error 7 with a message as written, for a fault that is not about one value but about several or
// the document as a whole ("\"vlanQoS\" needs a non-zero \"vlan\"", "mode macvlan needs
// \"master\""). Every other constructor of error 7 here builds its message and calls it.
Error invalidConfig(std::string msg);

// Error 7: "<where>: <what>" ("resourceList[0].resourceName: is required", "DRA device \"x\": 40
// attributes, at most 32 are allowed"). Every reader of an outside document builds its "this
// value is wrong" errors with it, so a message always starts with what it is about.
Error invalidAt(std::string_view where, std::string_view what);

// Error 7 "\"<path>\" is required".
Error missing(std::string_view path);
// A string member that must be there: `missing(path)` when absent or null.
Result<std::string> reqStringAt(const nlohmann::json& obj, std::string_view key,
                                std::string_view path);

// Error 7 "\"<key>\" is \"<word>\", not one of \"a\", \"b\"".
Error notOneOf(std::string_view key, std::string_view word,
               std::span<const std::string_view> words);
// Error 7 "<path>: \"<word>\" is not one of \"a\", \"b\"" (invalidAt's form).
Error notOneOfAt(std::string_view path, std::string_view word,
                 std::span<const std::string_view> words);

// How a word that is not in an enum's table is refused: the error about the member named `key`
// holding `word`, given the words the table accepts (enumWords). notOneOf and notOneOfAt are
// two; a reader whose documents have their own convention (CNI's error 2 for a value it does not
// implement) brings its own.
using WordRefusal = Error (*)(std::string_view key, std::string_view word,
                              std::span<const std::string_view> words);

// A value that is a string naming one of `table`'s values: error 7 naming `key` for another
// type, `refuse` for a word not in `table`.
template <typename E>
Result<E> asEnum(const nlohmann::json& v, std::string_view key, std::span<const EnumName<E>> table,
                 WordRefusal refuse = notOneOf, WordCase c = WordCase::kExact) {
  RDMANET_ASSIGN_OR_RETURN(std::string word, asString(v, key));
  if (std::optional<E> e = enumOf<E>(table, word, c)) return *e;
  return refuse(key, word, enumWords<E>(table));
}

// A string member of `obj` looked up by `key`, named by `path` in errors, that names one of
// `table`'s values: nullopt when absent or null, otherwise as asEnum.
template <typename E>
Result<std::optional<E>> optEnumAt(const nlohmann::json& obj, std::string_view key,
                                   std::string_view path, std::span<const EnumName<E>> table,
                                   WordRefusal refuse = notOneOf, WordCase c = WordCase::kExact) {
  const nlohmann::json* v = jsonMember(obj, key);
  if (v == nullptr) return std::optional<E>();
  RDMANET_ASSIGN_OR_RETURN(E e, asEnum<E>(*v, path, table, refuse, c));
  return std::optional<E>(e);
}

// optEnumAt for a member named by its own key.
template <typename E>
Result<std::optional<E>> optEnum(const nlohmann::json& obj, std::string_view key,
                                 std::span<const EnumName<E>> table, WordRefusal refuse = notOneOf,
                                 WordCase c = WordCase::kExact) {
  return optEnumAt<E>(obj, key, key, table, refuse, c);
}

}  // namespace rdmanet
