#include "cni/conf/version.h"

#include <gtest/gtest.h>

namespace rdmanet::cni {
namespace {

TEST(VersionTest, AcceptsEverySupportedVersion) {
  for (const char* v : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    EXPECT_TRUE(checkSupported(v).ok()) << v;
  }
}

TEST(VersionTest, RejectsOthersWithCode1NamingTheVersion) {
  for (const char* v : {"0.1.0", "0.2.0", "1.2.0", "", "banana", "1.0"}) {
    const Status s = checkSupported(v);
    ASSERT_FALSE(s.ok()) << v;
    EXPECT_EQ(s.error().code, ErrorCode::kIncompatibleVersion);
    EXPECT_NE(s.error().details.find(std::string("\"") + v + "\""), std::string::npos);
  }
}

TEST(VersionTest, ComparesNumerically) {
  EXPECT_TRUE(versionAtLeast("1.10.0", "1.9.0"));
  EXPECT_TRUE(versionAtLeast("0.4.0", "0.4.0"));
  EXPECT_FALSE(versionAtLeast("0.3.1", "0.4.0"));
  EXPECT_FALSE(SpecVersion::parse("1.x.0").has_value());
  EXPECT_FALSE(SpecVersion::parse("1.0.0.0").has_value());
}

TEST(VersionTest, HighestCommonRespectsCeilingAndTheirList) {
  const std::vector<std::string> debian = {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"};
  EXPECT_EQ(highestCommon(debian, "1.1.0"), "1.0.0");
  EXPECT_EQ(highestCommon(debian, "0.4.0"), "0.4.0");
  EXPECT_EQ(highestCommon({"0.2.0"}, "1.1.0"), std::nullopt);
}

}  // namespace
}  // namespace rdmanet::cni
