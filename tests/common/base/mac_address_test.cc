#include "common/base/mac_address.h"

#include <gtest/gtest.h>

namespace rdmanet {
namespace {

TEST(MacAddressTest, RoundTripsAndLowercases) {
  auto m = MacAddress::parse("02:AB:cd:00:11:FF");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->str(), "02:ab:cd:00:11:ff");
  EXPECT_FALSE(m->isZero());
  EXPECT_FALSE(m->isMulticast());
}

TEST(MacAddressTest, DetectsZeroAndMulticast) {
  EXPECT_TRUE(MacAddress::parse("00:00:00:00:00:00")->isZero());
  EXPECT_TRUE(MacAddress::parse("01:00:5e:00:00:01")->isMulticast());
}

TEST(MacAddressTest, RejectsMalformedWithCode7) {
  for (const char* bad : {"", "02:ab:cd:00:11", "02:ab:cd:00:11:ff:00", "02-ab-cd-00-11-ff",
                          "02:ab:cd:00:11:fg", "2:ab:cd:00:11:ff0"}) {
    auto m = MacAddress::parse(bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.error().code, ErrorCode::kInvalidConfig);
  }
}

}  // namespace
}  // namespace rdmanet
