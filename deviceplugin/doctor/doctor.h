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
//       auto pause = EthtoolPauseReader::open();           // failure: nullptr (pause UNKNOWN)
//       IbvRdmaVerbs verbs;                                // RDMA facts from verbs, else sysfs
//       std::optional<CounterSnapshot> prev;
//       // every interval:
//       DoctorReport r = runDoctor({.sysfs = sysfs, .netlink = nl.ok() ? nl->get() : nullptr,
//                                   .verbs = &verbs, .pause = pause.ok() ? pause->get() : nullptr,
//                                   .options = {.expect_mtu = 9000, .lossless_priority = 3},
//                                   .baseline = prev ? &*prev : nullptr,
//                                   .now_unix = time(nullptr)});
//       prev = r.counters;                                 // deltas are per interval
//       std::string text = renderPrometheus(r);            // render.h; append to /metrics
//
// runDoctor() never fails as a whole and never throws: whatever cannot be read becomes an
// UNKNOWN result with the reason in its evidence. It does not log. It reads sysfs (and
// /proc/modules, /sys/devices/system/cpu, /sys/module) below the Sysfs root only, so tests and
// the simulated node fake all of it; the other side effects are Netlink::dcb() and
// PauseReader::pause() per port and one RdmaVerbs::query() per data port's RDMA device (open,
// query, close). Cost: a few hundred small file reads per run; fine every 30 s or more.

#include <atomic>
#include <cstdint>

#include "common/base/sysfs.h"
#include "common/inventory/node.h"
#include "common/net/netlink.h"
#include "common/net/pause.h"
#include "common/rdma/rdma_verbs.h"
#include "deviceplugin/doctor/report.h"

namespace rdmanet::doctor {

struct DoctorOptions {
  int expect_mtu = 9000;      // every data port's MTU must be at least this (jumbo frames)
  int lossless_priority = 3;  // the 802.1p priority RoCE traffic uses (PFC must protect it)
  int pod_mtu = 0;            // the MTU pods get on these ports (the netconf "mtu"); 0: not checked
};

struct DoctorInputs {
  const Sysfs& sysfs;
  // Bound to the network namespace the data ports live in (the host's). nullptr: the DCB
  // checks report UNKNOWN.
  Netlink* netlink = nullptr;
  // RDMA port facts (active MTU, rate, GID types). nullptr or a device it cannot open: the
  // doctor falls back to sysfs and says so in the evidence ("source").
  RdmaVerbs* verbs = nullptr;
  // Global pause, in the same netns as `netlink`. nullptr: the pause check reports UNKNOWN.
  PauseReader* pause = nullptr;
  DoctorOptions options{};
  // Counters of an earlier run; the counters check then reports growth since it. nullptr:
  // absolute values only.
  const CounterSnapshot* baseline = nullptr;
  int64_t now_unix = 0;  // stamped on the snapshot this run takes
  // Raised from another thread (the daemon stopping): the run ends at the next check, and its
  // report is incomplete. nullptr: the run always completes.
  const std::atomic<bool>* cancel = nullptr;
};

// How the doctor scans: the checks look at PFs and GPUs only (VFs belong to pods), so VFs are
// left out and the doctor's cost follows the PFs, however many VFs the node has.
inline constexpr ScanOptions kScan{.vfs = false};

// Scans the node (scanNode with kScan) and runs every check.
DoctorReport runDoctor(const DoctorInputs& in);
// The same on an inventory the caller already holds (the daemon rescans on its own schedule).
DoctorReport runDoctor(const DoctorInputs& in, const NodeInventory& inv);

}  // namespace rdmanet::doctor
