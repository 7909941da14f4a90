#pragma once
// The names of an enum's values (or of a code's: an HTTP status, an IB link speed), kept in one
// table per enum that serves both ways: reading a word ("shared" -> PoolMode::kShared) and naming
// a value for logs and output. A value may have several spellings: the first one names it.
//
//   constexpr EnumName<PoolMode> kPoolModes[] = {{"vf", PoolMode::kVf}, {"shared", ...}};
//   std::optional<PoolMode> m = enumOf<PoolMode>(kPoolModes, word);  // nullopt: not a mode
//   std::string_view n = nameOf<PoolMode>(kPoolModes, m);            // "vf"
//
// What an unknown word means (which error) stays with the caller; enumWords lists the choices.

#include <algorithm>
#include <cctype>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace rdmanet {

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

// How a word is matched against a table: as written, or in any case (the table's words are
// lower case: "802.1Q", "ON", "Eth" read as "802.1q", "on", "eth").
enum class WordCase { kExact, kFold };

inline bool sameWord(std::string_view table_word, std::string_view word, WordCase c) {
  if (c == WordCase::kExact) return table_word == word;
  auto lower = [](char ch) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  };
  return std::ranges::equal(table_word, word, {}, {}, lower);
}

// The value whose word is `name`; nullopt for a word not in `table`.
template <typename E>
std::optional<E> enumOf(std::span<const EnumName<E>> table, std::string_view name,
                        WordCase c = WordCase::kExact) {
  for (const auto& e : table) {
    if (sameWord(e.name, name, c)) return e.value;
  }
  return std::nullopt;
}

// The words that name `table`'s values, one per value (its first spelling), in table order: the
// choices an error about an unknown word lists.
template <typename E>
std::vector<std::string_view> enumWords(std::span<const EnumName<E>> table) {
  std::vector<std::string_view> words;
  for (auto it = table.begin(); it != table.end(); ++it) {
    auto same = [&](const EnumName<E>& e) { return e.value == it->value; };
    if (std::none_of(table.begin(), it, same)) words.push_back(it->name);
  }
  return words;
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
