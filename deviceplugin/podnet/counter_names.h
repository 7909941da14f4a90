#pragma once
// One set of metric names for the RDMA counters drivers name differently. mlx5 (hw_counters and
// the IB PMA counters/) and rxe (hw_counters) say the same thing in their own words; each raw
// name maps to at most one metric, and the raw name stays as the `counter` label, so nothing is
// lost and two raw names feeding one metric stay apart.
//
// Names checked against the kernel: drivers/infiniband/sw/rxe/rxe_hw_counters.c
// (rxe_counter_descs) and drivers/infiniband/hw/mlx5/counters.c (retrans/cong/basic counters).

#include <cstdint>
#include <optional>
#include <string_view>

namespace rdmanet::podnet {

// The metric a raw counter feeds, without the "rdmanet_pod_rdma_" prefix and "_total" suffix
// ("out_of_sequence"), and the factor that turns its unit into the metric's (IB PMA's
// port_xmit_data/port_rcv_data count 4-byte words: x4 for bytes).
struct CounterMetric {
  std::string_view name{};
  uint64_t scale = 1;
};

// nullopt for a counter with no common meaning: it is exported as
// rdmanet_pod_rdma_driver_counter_total{counter="<raw>"}.
std::optional<CounterMetric> metricFor(std::string_view raw_name);

// Every common metric name, in export order (for HELP lines and the doctor).
inline constexpr std::string_view kCommonMetrics[] = {
    "cnp_sent",        "cnp_handled", "ecn_marked_packets", "out_of_sequence",
    "sequence_errors", "retransmits", "rnr_naks",           "rx_bytes",
    "tx_bytes",        "rx_packets",  "tx_packets"};

// The HELP text of a common metric.
std::string_view metricHelp(std::string_view name);

}  // namespace rdmanet::podnet
