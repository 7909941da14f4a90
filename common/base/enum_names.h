#pragma once
// The names of an enum's values (or of a code's: an HTTP status, an IB link speed), kept in one
// table per enum that serves both ways: reading a word ("shared" -> PoolMode::kShared) and naming
// a value for logs and output. A value may have several spellings: the first one names it.
//
//   constexpr EnumName<PoolMode> kPoolModes[] = {{"vf", PoolMode::kVf}, {"shared", ...}};
//   std::optional<PoolMode> m = enumOf<PoolMode>(kPoolModes, word);  // nullopt: not a mode
//   std::string_view n = nameOf<PoolMode>(kPoolModes, m);            // "vf"
//
// What an unknown word means (which error, which list of choices) stays with the caller.

#include <optional>
#include <span>
#include <string_view>

namespace rdmanet {

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

// The value whose word is `name`; nullopt for a word not in `table`.
template <typename E>
std::optional<E> enumOf(std::span<const EnumName<E>> table, std::string_view name) {
  for (const auto& e : table) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

// The word for `value`; `other` for a value not in `table`.
template <typename E>
std::string_view nameOf(std::span<const EnumName<E>> table, E value, std::string_view other = "?") {
  for (const auto& e : table) {
    if (e.value == value) return e.name;
  }
  return other;
}

}  // namespace rdmanet
