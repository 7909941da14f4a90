#include "deviceplugin/doctor/counters.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/base/enum_names.h"
#include "common/json/json_access.h"
#include "common/json/json_dump.h"
#include "common/os/atomic_file.h"
#include "common/os/read_file.h"

namespace rdmanet::doctor {
namespace {

using json = nlohmann::json;

// mlx5 names (Documentation/ABI and the mlx5 RDMA counter list). Unknown names are recorded but
// not judged.
constexpr std::array<std::pair<std::string_view, CounterClass>, 20> kClasses = {{
    // physical layer and receive errors: growth means a bad cable, optic or port
    {"symbol_error", CounterClass::kError},
    {"link_downed", CounterClass::kError},
    {"link_error_recovery", CounterClass::kError},
    {"port_rcv_errors", CounterClass::kError},
    {"port_rcv_remote_physical_errors", CounterClass::kError},
    {"local_link_integrity_errors", CounterClass::kError},
    {"excessive_buffer_overrun_errors", CounterClass::kError},
    {"port_xmit_discards", CounterClass::kError},
    // RoCE transport: packets lost in a network that should be lossless
    {"out_of_sequence", CounterClass::kRetransmit},
    {"packet_seq_err", CounterClass::kRetransmit},
    {"local_ack_timeout_err", CounterClass::kRetransmit},
    {"rnr_nak_retry_err", CounterClass::kRetransmit},
    {"implied_nak_seq_err", CounterClass::kRetransmit},
    {"duplicate_request", CounterClass::kRetransmit},
    {"roce_adp_retrans", CounterClass::kRetransmit},
    {"roce_adp_retrans_to", CounterClass::kRetransmit},
    // DCQCN congestion control at work
    {"np_cnp_sent", CounterClass::kCongestion},
    {"rp_cnp_handled", CounterClass::kCongestion},
    {"rp_cnp_ignored", CounterClass::kCongestion},
    {"np_ecn_marked_roce_packets", CounterClass::kCongestion},
}};

}  // namespace

std::optional<CounterClass> classifyCounter(std::string_view name) {
  for (const auto& [n, c] : kClasses) {
    if (n == name) return c;
  }
  return std::nullopt;
}

std::string_view counterClassName(CounterClass c) {
  static constexpr EnumName<CounterClass> kNames[] = {{"error", CounterClass::kError},
                                                      {"retransmit", CounterClass::kRetransmit},
                                                      {"congestion", CounterClass::kCongestion}};
  return nameOf<CounterClass>(kNames, c, "error");
}

std::string snapshotToJson(const CounterSnapshot& snap) {
  json j = {{"version", 1}, {"taken_at", snap.taken_at}, {"ports", json::object()}};
  for (const auto& [port, counters] : snap.ports) {
    json& p = j["ports"][port];
    p = json::object();
    for (const auto& [name, v] : counters) p[name] = v;
  }
  return dumpJson(j, 2) + "\n";
}

Result<CounterSnapshot> snapshotFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return makeError(ErrorCode::kDecodeFailure, "baseline is not JSON");
  auto bad = [](const std::string& what) {
    return makeError(ErrorCode::kInvalidConfig, "baseline: " + what);
  };
  if (!j.is_object() || !j.contains("ports") || !j["ports"].is_object()) {
    return bad("\"ports\" must be an object");
  }
  if (auto v = intOr(j, "version", 0); !v.ok() || *v != 1) return bad("\"version\" must be 1");
  CounterSnapshot snap;
  auto taken_at = intOr<int64_t>(j, "taken_at", 0);
  if (!taken_at.ok()) return bad(taken_at.error().msg);
  snap.taken_at = *taken_at;
  for (const auto& [port, counters] : j["ports"].items()) {
    if (!counters.is_object()) return bad(fmt::format("ports.{} must be an object", port));
    auto& out = snap.ports[port];
    for (const auto& [name, v] : counters.items()) {
      // Counters are unsigned 64-bit in the kernel: the whole range, beyond int64_t.
      if (!v.is_number_unsigned()) {
        return bad(fmt::format("ports.{}.{} must be a non-negative integer", port, name));
      }
      out[name] = v.get<uint64_t>();  // json-number: checked
    }
  }
  return snap;
}

Result<CounterSnapshot> loadBaseline(const std::string& file) {
  // A node's counters are a few KiB; the bound keeps a wrong --baseline from being read whole.
  constexpr size_t kMaxBaselineBytes = 16 << 20;
  // The operator names the file (--baseline): a symlink is theirs to use.
  auto text = readFile(file, kMaxBaselineBytes, Symlink::kFollow);
  if (!text.ok()) return text.error().context("reading baseline");
  if (!*text) return errnoError(ErrorCode::kIoFailure, ENOENT, "reading baseline " + file);
  auto snap = snapshotFromJson(**text);
  if (!snap.ok()) return snap.error().context(file);
  return snap;
}

Status saveBaseline(const std::string& file, const CounterSnapshot& snap) {
  // Durable: a crash leaves either the old baseline or the whole new one.
  return writeFileAtomic(file, snapshotToJson(snap), {.mode = 0600, .durable = true});
}

std::vector<CounterDelta> counterDeltas(const CounterSnapshot& before, const CounterSnapshot& now) {
  std::vector<CounterDelta> out;
  for (const auto& [port, counters] : now.ports) {
    auto bp = before.ports.find(port);
    if (bp == before.ports.end()) continue;  // a port the baseline did not know
    for (const auto& [name, after] : counters) {
      const auto cls = classifyCounter(name);
      if (!cls) continue;
      auto bv = bp->second.find(name);
      if (bv == bp->second.end()) continue;
      out.push_back(CounterDelta{.port = port,
                                 .counter = name,
                                 .cls = *cls,
                                 .before = bv->second,
                                 .after = after,
                                 .reset = after < bv->second});
    }
  }
  return out;
}

}  // namespace rdmanet::doctor
