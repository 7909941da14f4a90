#include "deviceplugin/podnet/counter_names.h"

#include <array>
#include <utility>

namespace rdmanet::podnet {
namespace {

// raw name -> metric. mlx5 first, then rxe; names the two share (duplicate_request) are counted
// by neither metric: it is the responder seeing a retransmission, not one it made.
constexpr std::array<std::pair<std::string_view, CounterMetric>, 23> kMap = {{
    // DCQCN congestion control (mlx5 only: rxe has none)
    {"np_cnp_sent", {"cnp_sent", 1}},
    {"rp_cnp_handled", {"cnp_handled", 1}},
    {"np_ecn_marked_roce_packets", {"ecn_marked_packets", 1}},
    // packets lost on the path: the responder saw a gap ...
    {"out_of_sequence", {"out_of_sequence", 1}},
    {"out_of_seq_request", {"out_of_sequence", 1}},
    // ... the requester was told of one (NAK sequence error) ...
    {"packet_seq_err", {"sequence_errors", 1}},
    {"implied_nak_seq_err", {"sequence_errors", 1}},
    {"rcvd_seq_err", {"sequence_errors", 1}},
    // ... or timed out waiting for an ACK and retransmitted
    {"local_ack_timeout_err", {"retransmits", 1}},
    {"roce_adp_retrans", {"retransmits", 1}},
    {"roce_adp_retrans_to", {"retransmits", 1}},
    {"retry_exceeded_err", {"retransmits", 1}},
    {"completer_retry_err", {"retransmits", 1}},
    // receiver not ready: the application posts receives too slowly
    {"rnr_nak_retry_err", {"rnr_naks", 1}},
    {"rcvd_rnr_err", {"rnr_naks", 1}},
    {"send_rnr_err", {"rnr_naks", 1}},
    {"retry_rnr_exceeded_err", {"rnr_naks", 1}},
    // traffic: IB PMA data counters are in 4-byte words
    {"port_rcv_data", {"rx_bytes", 4}},
    {"port_xmit_data", {"tx_bytes", 4}},
    {"port_rcv_packets", {"rx_packets", 1}},
    {"port_xmit_packets", {"tx_packets", 1}},
    {"rcvd_pkts", {"rx_packets", 1}},
    {"sent_pkts", {"tx_packets", 1}},
}};

}  // namespace

std::optional<CounterMetric> metricFor(std::string_view raw_name) {
  for (const auto& [raw, m] : kMap) {
    if (raw == raw_name) return m;
  }
  return std::nullopt;
}

std::string_view metricHelp(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kHelp = {{
      {"cnp_sent", "Congestion notification packets the device sent (it saw ECN marks)."},
      {"cnp_handled", "Congestion notification packets the device reacted to (slowed down)."},
      {"ecn_marked_packets", "RoCE packets received with an ECN congestion mark."},
      {"out_of_sequence", "Packets received out of sequence: earlier ones were lost."},
      {"sequence_errors", "NAKs for sequence errors: the peer saw a gap."},
      {"retransmits", "Retransmissions and ACK timeouts."},
      {"rnr_naks", "Receiver-not-ready NAKs: receives were not posted in time."},
      {"rx_bytes", "Bytes received by the RDMA port."},
      {"tx_bytes", "Bytes sent by the RDMA port."},
      {"rx_packets", "Packets received by the RDMA port."},
      {"tx_packets", "Packets sent by the RDMA port."},
  }};
  for (const auto& [n, h] : kHelp) {
    if (n == name) return h;
  }
  return "RDMA counter.";
}

}  // namespace rdmanet::podnet
