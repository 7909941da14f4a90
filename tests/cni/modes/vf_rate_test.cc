// The VF rate decision (cni/modes/vf_rate.h): the netconf's rates, capped by the claim's share.
#include "cni/modes/vf_rate.h"

#include <gtest/gtest.h>

namespace rdmanet::cni {
namespace {

struct RateCase {
  std::string name;
  VfRateAsks asks;
  std::optional<VfRate> want;
};

class VfRateTest : public ::testing::TestWithParam<RateCase> {};

TEST_P(VfRateTest, TheRatesToSet) {
  const RateCase& c = GetParam();
  auto got = vfRateFor(c.asks);
  ASSERT_TRUE(got.ok()) << got.error().msg;
  EXPECT_EQ(*got, c.want);
}

constexpr VfRate kOrig{.min_mbps = 0, .max_mbps = 40000};

INSTANTIATE_TEST_SUITE_P(
    Asks, VfRateTest,
    ::testing::Values(
        // Nothing asks: the VF is left alone.
        RateCase{"NothingAsks", {.orig = kOrig}, std::nullopt},
        // Without a share, the netconf's, the VF's own where it names none.
        RateCase{"TheNadsMax", {.nad_max = 10000, .orig = kOrig}, VfRate{0, 10000}},
        RateCase{"TheNadsMinKeepsTheVfsMax", {.nad_min = 100, .orig = kOrig}, VfRate{100, 40000}},
        // A share caps max, whatever the VF had.
        RateCase{"TheShareAlone", {.claim_max = 2500, .orig = kOrig}, VfRate{0, 2500}},
        RateCase{"ANadMaxAboveTheShare",
                 {.nad_max = 10000, .claim_max = 2500, .orig = kOrig},
                 VfRate{0, 2500}},
        RateCase{"ANadMaxBelowTheShareIsKept",
                 {.nad_max = 1000, .claim_max = 2500, .orig = kOrig},
                 VfRate{0, 1000}},
        // max_tx_rate 0 is "no limit": the share still applies.
        RateCase{
            "ANadMaxOfZero", {.nad_max = 0, .claim_max = 2500, .orig = kOrig}, VfRate{0, 2500}},
        RateCase{"TheNadsMinStays",
                 {.nad_min = 500, .nad_max = 10000, .claim_max = 2500, .orig = kOrig},
                 VfRate{500, 2500}},
        RateCase{"AMinEqualToTheShare",
                 {.nad_min = 2500, .claim_max = 2500, .orig = kOrig},
                 VfRate{2500, 2500}}),
    [](const ::testing::TestParamInfo<RateCase>& i) { return i.param.name; });

TEST(VfRate, AMinAboveTheShareIsRefusedNamingBoth) {
  auto got = vfRateFor({.nad_min = 5000, .nad_max = 10000, .claim_max = 2500, .orig = kOrig});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(got.error().msg.find("\"min_tx_rate\" 5000 Mbit/s is above the 2500 Mbit/s"),
            std::string::npos)
      << got.error().msg;
  EXPECT_NE(got.error().msg.find("could never honour it"), std::string::npos);
}

TEST(VfRate, AVfMinAboveTheShareIsRefusedToo) {
  // The netconf names no min: the VF's own (set by someone else) cannot fit under the share.
  auto got = vfRateFor({.claim_max = 2500, .orig = {.min_mbps = 3000, .max_mbps = 0}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(got.error().msg.find("the VF's min_tx_rate 3000"), std::string::npos)
      << got.error().msg;
}

}  // namespace
}  // namespace rdmanet::cni
