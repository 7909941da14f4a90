#include "common/kube/quantity.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>

namespace rdmanet::kube {

namespace {

// Every suffix a quantity may carry, the decimal ones in ascending order: what parseQuantity
// reads and decimalQuantity writes.
struct Suffix {
  std::string_view text;
  int exp10;
  int exp2;
};
constexpr std::array<Suffix, 16> kSuffixTable = {{{"n", -9, 0},
                                                  {"u", -6, 0},
                                                  {"m", -3, 0},
                                                  {"", 0, 0},
                                                  {"k", 3, 0},
                                                  {"M", 6, 0},
                                                  {"G", 9, 0},
                                                  {"T", 12, 0},
                                                  {"P", 15, 0},
                                                  {"E", 18, 0},
                                                  {"Ki", 0, 10},
                                                  {"Mi", 0, 20},
                                                  {"Gi", 0, 30},
                                                  {"Ti", 0, 40},
                                                  {"Pi", 0, 50},
                                                  {"Ei", 0, 60}}};

// Beyond this an exponent says nothing more: any nonzero mantissa overflows int64 or rounds to
// +-1. Clamping keeps the scale arithmetic in range.
constexpr int64_t kExponentClamp = 1'000'000;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The exponent of "e<int>" / "E<int>" (sign optional, digits required), clamped.
std::optional<int64_t> exponentOf(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (!isDigit(c)) return std::nullopt;
    v = std::min(kExponentClamp, v * 10 + (c - '0'));
  }
  return negative ? -v : v;
}

// `digits` (a decimal integer, most significant first) times 2^exp2, exactly.
void timesPowerOfTwo(std::string& digits, int exp2) {
  if (exp2 == 0) return;
  unsigned __int128 carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    carry += static_cast<unsigned __int128>(*it - '0') << exp2;
    *it = static_cast<char>('0' + static_cast<int>(carry % 10));
    carry /= 10;
  }
  std::string head;
  for (; carry != 0; carry /= 10) head.insert(head.begin(), static_cast<char>('0' + carry % 10));
  digits.insert(0, head);
}

}  // namespace

std::string decimalQuantity(int64_t value) {
  if (value == 0) return "0";
  // Negated as unsigned: INT64_MIN has no positive int64 counterpart.
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string_view suffix;
  int exp10 = 0;
  // Up the table's decimal suffixes from "" while the mantissa stays whole.
  for (const Suffix& s : kSuffixTable) {
    if (s.exp2 != 0 || s.exp10 <= exp10) continue;
    uint64_t step = 1;
    for (int k = exp10; k < s.exp10; ++k) step *= 10;
    if (magnitude % step != 0) break;
    magnitude /= step;
    exp10 = s.exp10;
    suffix = s.text;
  }
  return fmt::format("{}{}{}", value < 0 ? "-" : "", magnitude, suffix);
}

Result<int64_t> parseQuantity(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    // The text is the API server's or a user's: quoted only when short.
    const std::string shown = text.size() <= 64 ? fmt::format("\"{}\"", text) : "";
    return makeError(ErrorCode::kInvalidConfig,
                     fmt::format("quantity {}{}{}", shown, shown.empty() ? "" : " ", why));
  };
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string digits;  // the mantissa's digits, integer and fraction
  int64_t fraction_digits = 0;
  bool point = false;
  for (; i < text.size(); ++i) {
    if (isDigit(text[i])) {
      digits.push_back(text[i]);
      if (point) ++fraction_digits;
    } else if (text[i] == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (digits.empty()) return bad("has no digits");
  const std::string_view suffix = text.substr(i);
  int64_t exp10 = 0;
  int exp2 = 0;
  const auto known = std::find_if(kSuffixTable.begin(), kSuffixTable.end(),
                                  [&](const Suffix& s) { return s.text == suffix; });
  if (known != kSuffixTable.end()) {
    exp10 = known->exp10;
    exp2 = known->exp2;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {  // not empty: "" is in the table
    const auto e = exponentOf(suffix.substr(1));
    if (!e) return bad("has a malformed exponent");
    exp10 = *e;
  } else {
    return bad("has an unknown suffix");
  }

  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return int64_t{0};
  digits.erase(0, first);
  timesPowerOfTwo(digits, exp2);
  // value = digits * 10^scale; its integer part has `whole` digits.
  const int64_t scale = exp10 - fraction_digits;
  const int64_t whole = static_cast<int64_t>(digits.size()) + scale;
  if (whole > 19) return bad("is beyond int64");
  uint64_t magnitude = 0;
  bool rest = false;  // a nonzero fraction: round away from zero
  for (int64_t k = 0; k < std::max<int64_t>(whole, 0); ++k) {
    const char c = k < static_cast<int64_t>(digits.size()) ? digits[k] : '0';
    if (magnitude > (std::numeric_limits<uint64_t>::max() - 9) / 10) return bad("is beyond int64");
    magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
  }
  for (int64_t k = std::max<int64_t>(whole, 0); k < static_cast<int64_t>(digits.size()); ++k) {
    rest = rest || digits[k] != '0';
  }
  if (rest) ++magnitude;
  const uint64_t limit =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
  if (magnitude > limit) return bad("is beyond int64");
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

}  // namespace rdmanet::kube
