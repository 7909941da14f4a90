#include "common/kube/names.h"

#include <gtest/gtest.h>

#include <string>

namespace rdmanet::kube {
namespace {

TEST(NamesTest, DnsLabel) {
  for (const char* ok : {"a", "pci-0000-81-00-0", "0abc", "a1-b2"})
    EXPECT_TRUE(isDnsLabel(ok)) << ok;
  for (const char* bad : {"", "-a", "a-", "A", "a.b", "a_b"}) EXPECT_FALSE(isDnsLabel(bad)) << bad;
  EXPECT_TRUE(isDnsLabel(std::string(63, 'a')));
  EXPECT_FALSE(isDnsLabel(std::string(64, 'a')));
}

TEST(NamesTest, DnsSubdomain) {
  for (const char* ok : {"node-1", "rdma.rdmanet.io", "a.b.c"})
    EXPECT_TRUE(isDnsSubdomain(ok)) << ok;
  for (const char* bad : {"", ".a", "a.", "a..b", "A.b", "a/b", "a_b.c"}) {
    EXPECT_FALSE(isDnsSubdomain(bad)) << bad;
  }
  EXPECT_FALSE(isDnsSubdomain(std::string(254, 'a')));
}

TEST(NamesTest, QualifiedNamePart) {
  for (const char* ok : {"a", "Z", "rdma_vf", "vf.pool-1", "0", "A-b_c.d"})
    EXPECT_TRUE(isQualifiedNamePart(ok)) << ok;
  for (const char* bad : {"", "-a", "a-", "_a", "a.", "a/b", "a b", "caf\xc3\xa9"})
    EXPECT_FALSE(isQualifiedNamePart(bad)) << bad;
  EXPECT_TRUE(isQualifiedNamePart(std::string(63, 'a')));
  EXPECT_FALSE(isQualifiedNamePart(std::string(64, 'a')));
}

}  // namespace
}  // namespace rdmanet::kube
