#pragma once
// The doctor's report model: one CheckResult per (check, device), each with a verdict, the
// evidence (the values read, in reading order) and a one-line remedy; plus the NIC x GPU
// distance matrix and the RDMA counter snapshot and deltas. Renderers (render.h) turn it into a
// table, JSON, or Prometheus text; nothing here does I/O.
//
// Verdict policy, so verdicts mean the same thing in every check:
//   FAIL    broken or misconfigured in a way that makes jobs fail or lose most of their
//           bandwidth, and that an admin can fix (port down, PFC off, ACS redirect on, ...);
//   WARN    degraded or risky, often by layout or tuning (GPU without a local NIC, powersave
//           governor, retransmits growing);
//   UNKNOWN the doctor could not read what it needs (driver without DCB, config space not
//           readable, no cpufreq): never reported as PASS;
//   PASS    checked and fine.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/inventory/topology.h"

namespace rdmanet::doctor {

enum class Verdict { kPass = 0, kWarn = 1, kFail = 2, kUnknown = 3 };

std::string_view verdictName(Verdict v);  // "PASS", "WARN", "FAIL", "UNKNOWN"
// How bad a verdict is, for "worst first": PASS 0 < UNKNOWN 1 < WARN 2 < FAIL 3.
int severity(Verdict v);

struct Evidence {
  std::string key{};
  std::string value{};
  bool operator==(const Evidence&) const = default;
};

struct CheckResult {
  std::string check{};   // "link", "link_speed", "rdma_port", "mtu", "pfc", "trust", ...
  std::string device{};  // "ens1f0", "mlx5_0/1", "GPU0", "ens1f0<->GPU0", "node"
  Verdict verdict = Verdict::kUnknown;
  std::vector<Evidence> evidence{};
  std::string remedy{};  // one line; empty on PASS

  // The value of an evidence key, or nullptr.
  const std::string* value(std::string_view key) const;
};

// The `nvidia-smi topo -m` style matrix: rows are data ports, columns GPUs (by PCI address).
struct DistanceMatrix {
  struct Nic {
    std::string label{};   // RDMA device name ("mlx5_0"), else the netdev, else the BDF
    std::string netdev{};  // may be empty
    std::string pci{};     // "0000:03:00.0"
    int numa_node = -1;
    // The root complex, "pci0000:80": DRA's resource.kubernetes.io/pcieRoot, which a claim's
    // matchAttribute pairs with the GPU driver's value. "" when unknown.
    std::string pcie_root{};
  };
  struct Gpu {
    std::string label{};  // "GPU0"
    std::string pci{};
    int numa_node = -1;
    std::string pcie_root{};
  };
  std::vector<Nic> nics{};
  std::vector<Gpu> gpus{};
  std::vector<std::vector<Distance>> cells{};  // cells[nic][gpu]

  // "PIX", ... for labels, or "" when either is unknown.
  std::string at(std::string_view nic, std::string_view gpu) const;
};

// RDMA port counters: port key "mlx5_0/1" -> counter name -> value. Names from counters/ and
// hw_counters/ share one namespace (mlx5 uses distinct names in the two directories).
struct CounterSnapshot {
  int64_t taken_at = 0;  // unix seconds, 0 if unknown
  std::map<std::string, std::map<std::string, uint64_t>> ports{};
};

// How a counter's growth is judged (counters.h lists the names in each class).
enum class CounterClass { kError, kRetransmit, kCongestion };

struct CounterDelta {
  std::string port{};     // "mlx5_0/1"
  std::string counter{};  // "out_of_sequence"
  CounterClass cls = CounterClass::kRetransmit;
  uint64_t before = 0;
  uint64_t after = 0;
  bool reset = false;  // after < before: the counter was reset (reboot, driver reload)
  uint64_t delta() const { return reset ? 0 : after - before; }
};

struct DoctorReport {
  std::vector<CheckResult> results{};
  DistanceMatrix matrix{};
  CounterSnapshot counters{};  // what this run read
  bool has_baseline = false;   // deltas were computed against a baseline
  int64_t baseline_taken_at = 0;
  std::vector<CounterDelta> deltas{};  // classified counters of every data port (0 included)

  Verdict worst() const;  // FAIL > WARN > UNKNOWN > PASS; PASS when there are no results
  // 0 when nothing FAILs (WARN and UNKNOWN do not fail a node), 1 on any FAIL.
  int exitCode() const;
  // The first result of `check` for `device`, or nullptr.
  const CheckResult* find(std::string_view check, std::string_view device) const;
  std::vector<const CheckResult*> all(std::string_view check) const;
};

}  // namespace rdmanet::doctor
