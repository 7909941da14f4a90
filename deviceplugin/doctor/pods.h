#pragma once
// `rdmanet-doctor pods`: which pod is suffering. Two readings of the device -> pod map
// (podnet/pod_metrics.h) an interval apart give each pod attachment's counter rates; each gets
// a verdict in the checklist's vocabulary, worst first:
//   FAIL  packets lost (out-of-sequence, sequence errors, retransmits) while the pod's port
//         shows no pause frames on its priority: loss on the path, not congestion; or its port
//         lost carrier; or the silent fallback to TCP: the pod holds an RDMA device whose
//         traffic counters stood still while its interface moved kTcpFallbackBytesPerS or more
//         (the workload talks TCP/UDP where it should talk RDMA). The interface's bytes are its
//         netdev counters, read in its netns, else its VF's as the PF counts them
//   WARN  packets lost while the port pauses (congestion, PFC engaged but not enough), or
//         receiver-not-ready NAKs (the application, not the network)
//   PASS  no loss (congestion notices alone are DCQCN at work, shown as a note)
//   UNKNOWN  no RDMA counters could be read for the attachment
// A macvlan pod shares its master's RDMA device: its counters are the port's, and the verdict
// says so (and another pod's RDMA traffic on the shared device can hide a fallback).

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "deviceplugin/doctor/report.h"
#include "deviceplugin/podnet/pod_reader.h"

namespace rdmanet::doctor {

// The interface traffic (bytes/s, both directions) from which a pod whose RDMA counters stand
// still has fallen back to TCP. Far above an idle pod's ARP, keepalives and a launcher's TCP
// bootstrap, far below any collective's. The chart's RdmanetPodSilentTcpFallback uses the same.
inline constexpr double kTcpFallbackBytesPerS = 1e6;

struct PodVerdict {
  std::string pod{};  // "ns/name"
  std::string interface {};
  std::string rdma_device{};
  std::string mode{};
  int priority = 0;
  Verdict verdict = Verdict::kPass;
  std::string summary{};  // one line, "pod ns/trainer-3: ..."
  std::string remedy{};
  double loss_per_s = 0;          // out-of-sequence + sequence errors + retransmits
  double cnp_per_s = 0;           // CNPs sent + handled
  double pause_per_s = 0;         // pause frames (rx + tx) on the port at the pod's priority
  double netdev_bytes_per_s = 0;  // the pod's interface, rx + tx: its netdev counters, else its
                                  // VF's as the PF counts them
  double rdma_bytes_per_s = 0;    // its RDMA device, rx + tx, where the driver counts bytes
  std::vector<Evidence> rates{};  // every common counter that moved, per second
};

// Verdicts for the attachments present in both readings, worst first (verdict, then loss rate,
// then CNP rate). `seconds` > 0. A counter that went backwards (driver reload) counts 0.
std::vector<PodVerdict> judgePods(const podnet::PodSnapshot& before,
                                  const podnet::PodSnapshot& after, double seconds);

// The table `rdmanet-doctor pods` prints.
void renderPodsTable(const std::vector<PodVerdict>& pods, double seconds, std::ostream& out);
// The same as JSON, for machines: {"interval_s": S, "pods": [{"pod", "interface",
// "rdma_device", "mode", "priority", "verdict", "summary", "remedy", "loss_per_s", "cnp_per_s",
// "pause_per_s", "netdev_bytes_per_s", "rdma_bytes_per_s", "rates": {metric: "1.2 k/s"}}, ...]}
// in the table's order.
void renderPodsJson(const std::vector<PodVerdict>& pods, double seconds, std::ostream& out);

// "1.2 k", "850", "3.4 M": a rate as the summaries write it.
std::string humanRate(double per_s);
// "2.1 GB", "850 B", "0 B": an amount of bytes.
std::string humanBytes(double bytes);

// The subcommand: `pods [--interval S] [--json] [--cni-state-dir DIR] [--sysfs-root DIR]`. `read`
// takes one reading with the given state dir and sysfs root; `wait` sleeps the interval (tests pass
// one that advances their fake counters). Exit 0 without FAIL, 1 with one, 2 on a usage error.
struct PodsCliDeps {
  std::function<podnet::PodSnapshot(const std::string& state_dir, const std::string& sysfs_root)>
      read;
  std::function<void(int seconds)> wait;
};
int runPodsCli(const std::vector<std::string>& args, const PodsCliDeps& deps, std::ostream& out,
               std::ostream& err);

}  // namespace rdmanet::doctor
