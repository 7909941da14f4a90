// Driver counter names -> the common metric names, and ethtool statistics -> PFC counters.
#include <gtest/gtest.h>

#include "deviceplugin/podnet/counter_names.h"
#include "deviceplugin/podnet/pfc_stats.h"

namespace rdmanet::podnet {
namespace {

struct NameCase {
  const char* raw;
  const char* metric;  // nullptr: driver_counter
  uint64_t scale;
};

TEST(CounterNamesTest, Mlx5AndRxeNamesMeetOnOneSet) {
  const NameCase cases[] = {
      // mlx5 hw_counters and IB PMA counters
      {"np_cnp_sent", "cnp_sent", 1},
      {"rp_cnp_handled", "cnp_handled", 1},
      {"np_ecn_marked_roce_packets", "ecn_marked_packets", 1},
      {"out_of_sequence", "out_of_sequence", 1},
      {"packet_seq_err", "sequence_errors", 1},
      {"local_ack_timeout_err", "retransmits", 1},
      {"rnr_nak_retry_err", "rnr_naks", 1},
      {"port_rcv_data", "rx_bytes", 4},
      {"port_xmit_data", "tx_bytes", 4},
      {"port_rcv_packets", "rx_packets", 1},
      {"port_xmit_packets", "tx_packets", 1},
      // rxe (rxe_hw_counters.c)
      {"out_of_seq_request", "out_of_sequence", 1},
      {"rcvd_seq_err", "sequence_errors", 1},
      {"retry_exceeded_err", "retransmits", 1},
      {"rcvd_rnr_err", "rnr_naks", 1},
      {"sent_pkts", "tx_packets", 1},
      {"rcvd_pkts", "rx_packets", 1},
      // kept under their raw name only
      {"duplicate_request", nullptr, 1},
      {"out_of_buffer", nullptr, 1},
      {"symbol_error", nullptr, 1},
      {"ack_deferred", nullptr, 1},
  };
  for (const auto& c : cases) {
    const auto m = metricFor(c.raw);
    if (c.metric == nullptr) {
      EXPECT_FALSE(m.has_value()) << c.raw;
      continue;
    }
    ASSERT_TRUE(m.has_value()) << c.raw;
    EXPECT_EQ(m->name, c.metric) << c.raw;
    EXPECT_EQ(m->scale, c.scale) << c.raw;
  }
}

TEST(CounterNamesTest, EveryMappedMetricIsACommonOneWithHelp) {
  for (std::string_view raw : {"np_cnp_sent", "rcvd_pkts", "retry_rnr_exceeded_err"}) {
    const auto m = metricFor(raw);
    ASSERT_TRUE(m);
    EXPECT_NE(std::find(std::begin(kCommonMetrics), std::end(kCommonMetrics), m->name),
              std::end(kCommonMetrics));
    EXPECT_NE(metricHelp(m->name), "RDMA counter.");
  }
}

TEST(PfcStatsTest, Mlx5PerPriorityPauseFramesAndDuration) {
  const EthtoolStats stats = {
      {"rx_packets", 100},   {"rx_prio3_pause", 7},           {"rx_prio3_pause_duration", 1500},
      {"tx_prio3_pause", 2}, {"tx_prio3_pause_duration", 40}, {"rx_prio3_pause_transition", 9},
      {"rx_prio0_pause", 0}, {"rx_pause_ctrl_phy", 5}};
  EXPECT_EQ(pfcCounters(stats),
            (std::vector<PfcCounter>{
                {.priority = 0, .direction = "rx", .frames = 0},
                {.priority = 3, .direction = "rx", .frames = 7, .duration_us = 1500},
                {.priority = 3, .direction = "tx", .frames = 2, .duration_us = 40},
            }));
}

TEST(PfcStatsTest, IceXoffFramesHaveNoDuration) {
  const EthtoolStats stats = {{"rx_priority_3_xoff.nic", 11}, {"tx_priority_3_xon.nic", 4}};
  EXPECT_EQ(pfcCounters(stats),
            (std::vector<PfcCounter>{{.priority = 3, .direction = "rx", .frames = 11}}));
}

TEST(PfcStatsTest, APortWithoutPfcCountersHasNone) {
  EXPECT_TRUE(pfcCounters({{"peer_ifindex", 5}, {"rx_queue_0_xdp_packets", 0}}).empty());
}

}  // namespace
}  // namespace rdmanet::podnet
