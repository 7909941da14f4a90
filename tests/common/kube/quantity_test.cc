#include "common/kube/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

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

}  // namespace
}  // namespace rdmanet::kube
