#pragma once
// The node doctor: the pre-training network checklist (links, RDMA ports, MTU, lossless
// Ethernet, NUMA, NIC x GPU topology, ACS, GPUDirect, CPU, RDMA counters) as a library.
//
// Two callers:
//   - the `rdmanet-doctor` binary (cli.h): one run, rendered as a table, JSON or Graphviz;
//   - the device plugin daemon, periodically, exporting the result as Prometheus gauges:
//
//       // once, in the daemon's host-netns thread (a Netlink belongs to its netns and thread)
//       auto nl = LibnlNetlink::open();                    // failure: pass nullptr (DCB UNKNOWN)
//       std::optional<CounterSnapshot> prev;
//       // every interval:
//       DoctorReport r = runDoctor({.sysfs = sysfs, .netlink = nl.ok() ? nl->get() : nullptr,
//                                   .options = {.expect_mtu = 9000, .lossless_priority = 3},
//                                   .baseline = prev ? &*prev : nullptr,
//                                   .now_unix = time(nullptr)});
//       prev = r.counters;                                 // deltas are per interval
//       std::string text = renderPrometheus(r);            // render.h; append to /metrics
//
// runDoctor() never fails as a whole and never throws: whatever cannot be read becomes an
// UNKNOWN result with the reason in its evidence. It does not log. It reads sysfs (and
// /proc/modules, /sys/devices/system/cpu, /sys/module) below the Sysfs root only, so tests and
// the simulated node fake all of it; the only other side effect is Netlink::dcb() per port.
// Cost: a few hundred small file reads per run; fine every 30 s or more.

#include <cstdint>

#include "common/base/sysfs.h"
#include "common/inventory/node.h"
#include "common/net/netlink.h"
#include "deviceplugin/doctor/report.h"

namespace rdmanet::doctor {

struct DoctorOptions {
  int expect_mtu = 9000;      // every data port's MTU must be at least this (jumbo frames)
  int lossless_priority = 3;  // the 802.1p priority RoCE traffic uses (PFC must protect it)
};

struct DoctorInputs {
  const Sysfs& sysfs;
  // Bound to the network namespace the data ports live in (the host's). nullptr: the DCB
  // checks report UNKNOWN.
  Netlink* netlink = nullptr;
  DoctorOptions options{};
  // Counters of an earlier run; the counters check then reports growth since it. nullptr:
  // absolute values only.
  const CounterSnapshot* baseline = nullptr;
  int64_t now_unix = 0;  // stamped on the snapshot this run takes
};

// How the doctor scans: the checks look at PFs and GPUs only (VFs belong to pods), so VFs are
// left out and the doctor's cost follows the PFs, however many VFs the node has.
inline constexpr ScanOptions kScan{.vfs = false};

// Scans the node (scanNode with kScan) and runs every check.
DoctorReport runDoctor(const DoctorInputs& in);
// The same on an inventory the caller already holds (the daemon rescans on its own schedule).
DoctorReport runDoctor(const DoctorInputs& in, const NodeInventory& inv);

}  // namespace rdmanet::doctor
