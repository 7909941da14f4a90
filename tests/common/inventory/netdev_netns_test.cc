// A netdev name that is not UTF-8, given by the real kernel: `ip link add` takes the byte 0xff,
// as a pod with NET_ADMIN can. In a throw-away namespace (its own sysfs, mounted by
// MountingNetnsSysfs), discovery leaves the name out and reports it; its peer is listed. Root
// only; skipped otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/inventory/netdev.h"
#include "common/net/netns_sysfs.h"
#include "tests/common/inventory/refusals.h"
#include "tests/common/net/netns_helpers.h"

namespace rdmanet {
namespace {

TEST(NetdevNetnsTest, TheKernelsNameWithByte0xffIsLeftOutAndReported) {
  if (!testing::isRoot()) GTEST_SKIP() << "needs root: it creates a network namespace";
  testing::ScratchNetns ns;
  ASSERT_TRUE(ns.ok());
  const std::string bad = "v\xff\xfe";
  std::string err;
  ASSERT_TRUE(testing::ip(
      {"-n", ns.name(), "link", "add", bad, "type", "veth", "peer", "name", "okpeer0"}, &err))
      << err;
  testing::Refusals refusals;
  MountingNetnsSysfs reader("/", &refusals);
  std::vector<std::string> listed, raw;
  ASSERT_TRUE(reader
                  .read(ns.path(),
                        [&](const Sysfs& s) {
                          raw = s.list("/sys/class/net");
                          listed = listNetdevs(s);
                        })
                  .ok());
  EXPECT_NE(std::find(raw.begin(), raw.end(), bad), raw.end()) << "the kernel refused the name";
  EXPECT_EQ(listed, (std::vector<std::string>{"lo", "okpeer0"}));
  EXPECT_EQ(refusals.seen, std::vector<std::string>{"/sys/class/net/" + bad});
}

}  // namespace
}  // namespace rdmanet
