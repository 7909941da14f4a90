// The typed JSON helper's field readers (common/json/json_fields.h): every "this value is wrong"
// error is error 7 from one constructor; the enum accessor's one table per enum reads its words
// (as written or in any case), lists its choices once per value, and refuses an unknown word with
// the error the reader chose.
#include "common/json/json_fields.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace rdmanet {
namespace {

using nlohmann::json;

enum class Color { kRed, kGreen };
constexpr EnumName<Color> kColors[] = {
    {"red", Color::kRed}, {"green", Color::kGreen}, {"rouge", Color::kRed}};

TEST(JsonFieldsTest, ErrorsOfAWrongValueAreAllSevenWithTheirMessageAsBuilt) {
  for (const auto& [e, msg] : std::vector<std::pair<Error, std::string>>{
           {invalidConfig("\"a\" needs \"b\""), "\"a\" needs \"b\""},
           {invalidAt("list[0].a", "is wrong"), "list[0].a: is wrong"},
           {missing("spec.a"), "\"spec.a\" is required"}}) {
    EXPECT_EQ(e.code, ErrorCode::kInvalidConfig) << msg;
    EXPECT_EQ(e.msg, msg);
  }
}

// A reader's own refusal (a WordRefusal), as the CNI's error 2 is.
Error unsupportedColor(std::string_view key, std::string_view word,
                       std::span<const std::string_view> words) {
  return makeError(ErrorCode::kUnsupportedField, fmt::format("{} {} {}", key, word, words.size()));
}

TEST(JsonEnumTest, ChoicesAreEachValuesFirstWord) {
  EXPECT_EQ(enumWords<Color>(kColors), (std::vector<std::string_view>{"red", "green"}));
}

TEST(JsonEnumTest, WordsMatchAsWrittenOrInAnyCase) {
  EXPECT_EQ(enumOf<Color>(kColors, "rouge"), Color::kRed);
  EXPECT_EQ(enumOf<Color>(kColors, "Green"), std::nullopt);
  EXPECT_EQ(enumOf<Color>(kColors, "GrEEn", WordCase::kFold), Color::kGreen);
  EXPECT_EQ(enumOf<Color>(kColors, "gree", WordCase::kFold), std::nullopt);
}

TEST(JsonEnumTest, AbsentIsNothingAndAWordIsItsValue) {
  const json doc = {{"c", "green"}, {"n", nullptr}};
  EXPECT_EQ(*optEnum<Color>(doc, "c", kColors), Color::kGreen);
  EXPECT_EQ(*optEnum<Color>(doc, "n", kColors), std::nullopt);
  EXPECT_EQ(*optEnum<Color>(doc, "absent", kColors), std::nullopt);
}

TEST(JsonEnumTest, AnotherTypeIsATypeErrorNamingThePath) {
  const auto r = optEnumAt<Color>(json{{"c", 3}}, "c", "spec.c", kColors);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(r.error().msg, "\"spec.c\" must be a string");
}

TEST(JsonEnumTest, AnUnknownWordIsRefusedAsTheReaderChose) {
  const json doc = {{"c", "blue"}};
  const auto plain = optEnum<Color>(doc, "c", kColors);
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().msg, "\"c\" is \"blue\", not one of \"red\", \"green\"");
  const auto at = asEnum<Color>(doc["c"], "list[0].c", kColors, notOneOfAt);
  ASSERT_FALSE(at.ok());
  EXPECT_EQ(at.error().msg, "list[0].c: \"blue\" is not one of \"red\", \"green\"");
  const auto own = optEnum<Color>(doc, "c", kColors, unsupportedColor);
  ASSERT_FALSE(own.ok());
  EXPECT_EQ(own.error().code, ErrorCode::kUnsupportedField);
  EXPECT_EQ(own.error().msg, "c blue 2");
}

}  // namespace
}  // namespace rdmanet
