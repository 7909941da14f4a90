#include "common/kube/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace rdmanet::kube {
namespace {

// The expected texts are what apimachinery's Quantity.String() gives for these values with the
// DecimalSI format: the API server stores and returns exactly that.
TEST(QuantityTest, DecimalQuantityIsTheCanonicalForm) {
  EXPECT_EQ(decimalQuantity(0), "0");
  EXPECT_EQ(decimalQuantity(7), "7");
  EXPECT_EQ(decimalQuantity(1000), "1k");
  EXPECT_EQ(decimalQuantity(1500), "1500");
  EXPECT_EQ(decimalQuantity(100'000'000'000), "100G");
  EXPECT_EQ(decimalQuantity(30'000'000'000), "30G");
  EXPECT_EQ(decimalQuantity(1'500'000'000), "1500M");
  EXPECT_EQ(decimalQuantity(300'000'000), "300M");
  EXPECT_EQ(decimalQuantity(10'000'000'000'000), "10T");
  EXPECT_EQ(decimalQuantity(-2000), "-2k");
  EXPECT_EQ(decimalQuantity(1'000'000'000'000'000'000), "1E");
  EXPECT_EQ(decimalQuantity(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
}

// The values are apimachinery's Quantity.Value() for the same texts (resource.MustParse).
TEST(QuantityTest, ParseQuantityGivesTheWholeValue) {
  const std::pair<const char*, int64_t> cases[] = {
      {"0", 0},
      {"-0", 0},
      {"000", 0},
      {"7", 7},
      {"+7", 7},
      {"-7", -7},
      {"50G", 50'000'000'000},
      {"100G", 100'000'000'000},
      {"1500M", 1'500'000'000},
      {"1.5G", 1'500'000'000},
      {"12.5k", 12'500},
      {"1k", 1000},
      {"1T", 1'000'000'000'000},
      {"2P", 2'000'000'000'000'000},
      {"1E", 1'000'000'000'000'000'000},
      {"1Ki", 1024},
      {"1.5Ki", 1536},
      {"0.5Ki", 512},
      {"3Mi", 3 * 1024 * 1024},
      {"1Gi", 1LL << 30},
      {"1Ti", 1LL << 40},
      {"1Pi", 1LL << 50},
      {"7Ei", 7LL << 60},
      {"1e3", 1000},
      {"1E3", 1000},
      {"1e+3", 1000},
      {"25e-1", 3},
      {"5.", 5},
      {".5", 1},
      // Fractions round away from zero.
      {"1.5", 2},
      {"1.0001", 2},
      {"100m", 1},
      {"1000m", 1},
      {"1001m", 2},
      {"1n", 1},
      {"1u", 1},
      {"-1.5", -2},
      {"-100m", -1},
      {"1e-999999999999", 1},
      {"1.00000000000000000000000000000000000000000001", 2},
      {"0.000000000000000000000000000000000000000001Ei", 1},
      {"9223372036854775807", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808", std::numeric_limits<int64_t>::min()},
      {"9223372036854775806.5", std::numeric_limits<int64_t>::max()},
      {"0.0000000009223372036854775807E", 922'337'204},
  };
  for (const auto& [text, value] : cases) {
    auto r = parseQuantity(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().msg;
    EXPECT_EQ(*r, value) << text;
  }
}

TEST(QuantityTest, ParseQuantityRefusesMalformedTextsAndOverflowWithError7) {
  for (const char* text : {"",
                           "-",
                           "+",
                           ".",
                           "-.",
                           "G",
                           "1K",
                           "1 G",
                           " 1",
                           "1G ",
                           "1g",
                           "1KI",
                           "1ki",
                           "1Gib",
                           "1e",
                           "1E+",
                           "1e3.5",
                           "e3",
                           "1.2.3",
                           "1..2",
                           "0x10",
                           "1,5",
                           "1Mi3",
                           "1mm",
                           "--1",
                           "1e3k",
                           "9223372036854775808",
                           "-9223372036854775809",
                           "9223372036854775807.1",
                           "10E",
                           "8Ei",
                           "1e19",
                           "1e999999999999"}) {
    auto r = parseQuantity(text);
    ASSERT_FALSE(r.ok()) << text << " gave " << *r;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig) << text;
  }
  EXPECT_EQ(parseQuantity("1K").error().msg, "quantity \"1K\" has an unknown suffix");
  EXPECT_EQ(parseQuantity("1e19").error().msg, "quantity \"1e19\" is beyond int64");
  // A long text is not repeated in the message.
  EXPECT_EQ(parseQuantity(std::string(100, 'x')).error().msg, "quantity has no digits");
}

}  // namespace
}  // namespace rdmanet::kube
