// The daemon's log of the names discovery refuses (deviceplugin/daemon/refused_names.h).
#include "deviceplugin/daemon/refused_names.h"

#include <gtest/gtest.h>

namespace rdmanet::dp {
namespace {

TEST(RefusedNamesTest, EveryByteThatIsNotPrintableAsciiIsEscaped) {
  EXPECT_EQ(escapeName("ens1f0"), "ens1f0");
  EXPECT_EQ(escapeName("v\xff\xfe"), "v\\xff\\xfe");
  EXPECT_EQ(escapeName("a b\n\\"), "a\\x20b\\x0a\\x5c");
  EXPECT_EQ(escapeName("\xc3\xa9"), "\\xc3\\xa9");
}

}  // namespace
}  // namespace rdmanet::dp
