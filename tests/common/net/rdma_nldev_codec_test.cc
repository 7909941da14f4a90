// The RDMA netlink decoders over replies built from the <rdma/rdma_netlink.h> layout: here the
// hw counters of RDMA_NLDEV_CMD_STAT_GET (the probe's counters in a pod, probe_host.cc), whose
// entries without a name or a whole u64 are skipped, not misread.
#include "common/net/rdma_nldev_codec.h"

#include <gtest/gtest.h>
#include <rdma/rdma_netlink.h>

#include "tests/common/net/nl_bytes.h"

namespace rdmanet {
namespace {

using testing::NlBytes;

NlBytes& entry(NlBytes& b, const std::string& name, uint64_t value) {
  return b.begin(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
      .str(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name)
      .attr(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, value)
      .end();
}

TEST(RdmaHwCounters, EveryEntryByName) {
  NlBytes b;
  b.attr(RDMA_NLDEV_ATTR_DEV_INDEX, uint32_t{3}).attr(RDMA_NLDEV_ATTR_PORT_INDEX, uint32_t{1});
  b.begin(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  entry(b, "sent_pkts", 71627);
  entry(b, "completer_retry_err", 7);
  entry(b, "rcvd_seq_err", uint64_t{1} << 40);
  b.end();
  const auto c = parseRdmaHwCounters(b.bytes());
  EXPECT_EQ(c, (std::map<std::string, uint64_t>{{"completer_retry_err", 7},
                                                {"rcvd_seq_err", uint64_t{1} << 40},
                                                {"sent_pkts", 71627}}));
}

TEST(RdmaHwCounters, BrokenEntriesAreSkippedAndNoTableIsEmpty) {
  NlBytes b;
  b.begin(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  b.begin(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
      .str(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "no_value")
      .end();
  b.begin(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
      .attr(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, uint64_t{5})
      .end();
  b.begin(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
      .str(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "short_value")
      .attr(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, uint32_t{5})
      .end();
  entry(b, "rcvd_pkts", 9);
  b.end();
  EXPECT_EQ(parseRdmaHwCounters(b.bytes()), (std::map<std::string, uint64_t>{{"rcvd_pkts", 9}}));
  NlBytes none;
  none.attr(RDMA_NLDEV_ATTR_DEV_INDEX, uint32_t{3});
  EXPECT_TRUE(parseRdmaHwCounters(none.bytes()).empty());
  const std::vector<uint8_t> truncated(b.bytes().begin(), b.bytes().begin() + 11);
  EXPECT_TRUE(parseRdmaHwCounters(truncated).empty());
}

}  // namespace
}  // namespace rdmanet
