#include "common/base/pci_address.h"

#include <gtest/gtest.h>

namespace rdmanet {
namespace {

TEST(PciAddressTest, ParsesCanonicalForm) {
  auto a = PciAddress::parse("0000:81:10.2");
  ASSERT_TRUE(a.ok()) << a.error().msg;
  EXPECT_EQ(a->domain, 0);
  EXPECT_EQ(a->bus, 0x81);
  EXPECT_EQ(a->device, 0x10);
  EXPECT_EQ(a->function, 2);
  EXPECT_EQ(a->str(), "0000:81:10.2");
}

TEST(PciAddressTest, NormalisesUppercaseToLowercase) {
  auto a = PciAddress::parse("00AB:CD:1F.7");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->str(), "00ab:cd:1f.7");
}

TEST(PciAddressTest, RejectsEverythingElseWithCode7) {
  for (const char* bad : {"", "81:00.0", "0000:81:00.8", "0000:81:20.0", "0000:81:00.00",
                          "0000:81:00", "../../../etc", "0000:81:00.0/", "0000-81:00.0",
                          "0000:8g:00.0", " 0000:81:00.0", "0000:81:00.0\n", "0000:81:0x.0"}) {
    auto a = PciAddress::parse(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.error().code, ErrorCode::kInvalidConfig) << bad;
    EXPECT_NE(a.error().msg.find("invalid PCI address"), std::string::npos);
  }
}

TEST(PciAddressTest, OrdersByDomainBusDeviceFunction) {
  EXPECT_LT(*PciAddress::parse("0000:81:00.1"), *PciAddress::parse("0000:81:10.0"));
  EXPECT_LT(*PciAddress::parse("0000:81:1f.7"), *PciAddress::parse("0000:82:00.0"));
  EXPECT_LT(*PciAddress::parse("0000:ff:00.0"), *PciAddress::parse("0001:00:00.0"));
}

}  // namespace
}  // namespace rdmanet
