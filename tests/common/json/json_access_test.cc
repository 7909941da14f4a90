// Typed JSON access (common/json/json_access.h), the one helper the CNI, the device plugin's
// config and the kubeconfig reader share: every wrong type or range is error 7 and names the key
// it was given, a member or a path.
#include "common/json/json_access.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace rdmanet {
namespace {

using nlohmann::json;

struct Bad {
  const char* name;
  std::function<Status()> read;
  std::string message;
};
void PrintTo(const Bad& b, std::ostream* os) { *os << b.name; }

class JsonAccessBadTest : public ::testing::TestWithParam<Bad> {};

TEST_P(JsonAccessBadTest, IsInvalidContentNamingTheKey) {
  const Status st = GetParam().read();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(st.error().msg, GetParam().message);
}

template <typename T>
Status statusOf(const Result<T>& r) {
  return r.ok() ? okStatus() : Status(r.error());
}

const json kDoc = json::parse(R"({"s": 1, "b": "yes", "i": 1.5, "big": 18446744073709551615,
  "neg": -3, "o": [], "a": {}, "list": ["x", 2]})");

INSTANTIATE_TEST_SUITE_P(
    Table, JsonAccessBadTest,
    ::testing::Values(
        Bad{"StringNotString", [] { return statusOf(optString(kDoc, "s")); },
            "\"s\" must be a string"},
        Bad{"BoolNotBool", [] { return statusOf(optBool(kDoc, "b")); }, "\"b\" must be a boolean"},
        Bad{"FloatIsNotAnInteger", [] { return statusOf(optInt(kDoc, "i", 0, 9)); },
            "\"i\" must be an integer"},
        Bad{"UnsignedAboveInt64", [] { return statusOf(optInt(kDoc, "big", 0, INT64_MAX)); },
            "\"big\" is 18446744073709551615, out of range 0..9223372036854775807"},
        Bad{"BelowRange", [] { return statusOf(optInt(kDoc, "neg", 0, 7)); },
            "\"neg\" is -3, out of range 0..7"},
        Bad{"ObjectNotObject", [] { return statusOf(optObject(kDoc, "o")); },
            "\"o\" must be an object"},
        Bad{"ArrayNotArray", [] { return statusOf(optArray(kDoc, "a")); },
            "\"a\" must be an array"},
        Bad{"ListElementNamedByIndex",
            [] { return statusOf(asStringArray(kDoc["list"], "sel.vendors")); },
            "\"sel.vendors[1]\" must be a string"},
        Bad{"PathAsKey", [] { return statusOf(asString(kDoc["s"], "users[u].user.token")); },
            "\"users[u].user.token\" must be a string"},
        // A member deep in a document: looked up by its key, named by its path.
        Bad{"StringNamedByPath", [] { return statusOf(optString(kDoc, "s", "spec.s")); },
            "\"spec.s\" must be a string"},
        Bad{"BoolNamedByPath", [] { return statusOf(optBool(kDoc, "b", "spec.b")); },
            "\"spec.b\" must be a boolean"},
        Bad{"ObjectNamedByPath", [] { return statusOf(optObject(kDoc, "o", "items[0].o")); },
            "\"items[0].o\" must be an object"},
        Bad{"ArrayNamedByPath", [] { return statusOf(optArray(kDoc, "a", "items[0].a")); },
            "\"items[0].a\" must be an array"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(JsonAccessTest, AbsentNullAndNonObjectsReadAsNothing) {
  const json doc = json::parse(R"({"n": null})");
  EXPECT_EQ(*optString(doc, "n"), std::nullopt);
  EXPECT_EQ(*optInt(doc, "missing", 0, 1), std::nullopt);
  EXPECT_EQ(*optObject(doc, "n"), nullptr);
  EXPECT_EQ(jsonMember(json::array({1}), "n"), nullptr);
}

TEST(JsonAccessTest, ValuesOfTheRightTypeAndRangeAreReturned) {
  const json doc = json::parse(R"({"s": "x", "b": false, "i": 7, "list": ["a", "b"]})");
  EXPECT_EQ(*optString(doc, "s"), "x");
  EXPECT_EQ(*optBool(doc, "b"), false);
  EXPECT_EQ(*optInt(doc, "i", 7, 7), 7);
  EXPECT_EQ(*asStringArray(doc["list"], "list"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*optArray(doc, "list"), &doc["list"]);
}

// intOr is how a document's number becomes a C++ integer: a float, however large, and a value
// beyond the target type are errors naming the key, never nlohmann's unchecked conversion (a
// float out of range is undefined behaviour; the state-file fuzzer found it).
TEST(JsonAccessTest, IntOrChecksTheTypeAndTheTargetsRange) {
  const json doc = json::parse(
      R"({"huge": 3.5e124, "whole": 3.0, "wide": 70000, "neg": -1, "ok": 4095, "n": null})");
  EXPECT_EQ(intOr<int>(doc, "huge", 0).error().msg, "\"huge\" must be an integer");
  EXPECT_EQ(intOr<int>(doc, "whole", 0).error().msg, "\"whole\" must be an integer");
  EXPECT_EQ(intOr<uint16_t>(doc, "wide", 0).error().msg,
            "\"wide\" is 70000, out of range 0..65535");
  EXPECT_EQ(intOr<uint32_t>(doc, "neg", 0).error().msg,
            "\"neg\" is -1, out of range 0..4294967295");
  EXPECT_EQ(intOr<uint64_t>(doc, "neg", 0).error().msg,
            "\"neg\" is -1, out of range 0..9223372036854775807");
  EXPECT_EQ(intOr<int>(doc, "ok", 0, 0, 4094).error().msg, "\"ok\" is 4095, out of range 0..4094");
  EXPECT_EQ(*intOr<uint16_t>(doc, "ok", 0), 4095);
  EXPECT_EQ(*intOr<int>(doc, "n", -1), -1);
  EXPECT_EQ(*intOr<int8_t>(doc, "missing", 5), 5);
}

// Measurements (RTTs, Gbit/s) are numbers with a fraction: integers and floats both read.
TEST(JsonAccessTest, OptNumberTakesIntegersAndFloatsInRange) {
  const json doc = json::parse(R"({"f": 12.5, "i": 3, "s": "1", "neg": -0.5, "n": null})");
  EXPECT_EQ(**optNumber(doc, "f", 0, 1e9), 12.5);
  EXPECT_EQ(**optNumber(doc, "i", 0, 1e9), 3.0);
  EXPECT_FALSE(optNumber(doc, "n", 0, 1e9)->has_value());
  EXPECT_FALSE(optNumber(doc, "missing", 0, 1e9)->has_value());
  EXPECT_EQ(optNumber(doc, "s", 0, 1e9).error().msg, "\"s\" must be a number");
  EXPECT_EQ(optNumber(doc, "neg", 0, 10).error().msg, "\"neg\" is -0.5, out of range 0..10");
}

}  // namespace
}  // namespace rdmanet
