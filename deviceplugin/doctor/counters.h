#pragma once
// RDMA port counters: which ones the doctor judges, reading them, and the baseline file.
//
// Sources, per RDMA port: /sys/class/infiniband/<dev>/ports/<n>/counters/* (IB PMA counters:
// symbol_error, link_downed, port_rcv_errors, ...) and .../hw_counters/* (mlx5 RoCE counters:
// out_of_sequence, local_ack_timeout_err, np_cnp_sent, ...). All are monotonic since the driver
// loaded; the doctor compares them with a baseline to see what grows.
//
// Baseline file: JSON {"version": 1, "taken_at": <unix s>, "ports": {"mlx5_0/1": {name: n}}},
// written atomically (temp file + rename) with mode 0600.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/base/sysfs.h"
#include "common/inventory/rdma_counters.h"  // readPortCounters
#include "deviceplugin/doctor/report.h"

namespace rdmanet::doctor {

// The class of a counter the doctor judges, or nullopt for one it only records (byte and
// packet counts). Error counters growing is a FAIL, retransmits a WARN, congestion notices
// (CNPs, ECN marks) are shown but are normal operation of RoCE congestion control.
std::optional<CounterClass> classifyCounter(std::string_view name);
std::string_view counterClassName(CounterClass c);  // "error", "retransmit", "congestion"

// Error 5 on I/O failure, 6 on a file that does not parse, 7 on a wrong shape.
Result<CounterSnapshot> loadBaseline(const std::string& file);
Status saveBaseline(const std::string& file, const CounterSnapshot& snap);
std::string snapshotToJson(const CounterSnapshot& snap);
Result<CounterSnapshot> snapshotFromJson(std::string_view text);

// Deltas of the classified counters present in `now`, port by port, sorted.
std::vector<CounterDelta> counterDeltas(const CounterSnapshot& before, const CounterSnapshot& now);

}  // namespace rdmanet::doctor
