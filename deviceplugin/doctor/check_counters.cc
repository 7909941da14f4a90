// Counters: error, retransmit and congestion counters of each data port's RDMA port. With a
// baseline the doctor judges growth since it (what is happening now); without one it can only
// show totals since the driver loaded.
#include <fmt/format.h>

#include "deviceplugin/doctor/context.h"
#include "deviceplugin/doctor/counters.h"

namespace rdmanet::doctor {
namespace {

constexpr const char* kErrorRemedy =
    "error counters grew: check cable, optics and switch port (ethtool -S, switch logs); "
    "physical errors cause retransmits and NCCL timeouts";
constexpr const char* kRetransmitRemedy =
    "RoCE retransmits grew: packets are lost in a network meant to be lossless; check PFC on "
    "the priority end to end and switch buffers (NCCL timeouts, P99 spikes)";

void judgeDeltas(const std::string& port, const DoctorContext& ctx,
                 const std::vector<CounterDelta>& deltas, DoctorReport& out) {
  std::vector<Evidence> ev;
  if (ctx.baseline->taken_at > 0 && ctx.now_unix >= ctx.baseline->taken_at) {
    ev.push_back({"since", fmt::format("{}s ago", ctx.now_unix - ctx.baseline->taken_at)});
  }
  bool error_grew = false, retrans_grew = false;
  for (const auto& d : deltas) {
    if (d.port != port) continue;
    if (d.reset) {
      ev.push_back({d.counter, fmt::format("reset ({} -> {})", d.before, d.after)});
    } else if (d.delta() > 0) {
      ev.push_back({d.counter, fmt::format("+{} ({} -> {})", d.delta(), d.before, d.after)});
      error_grew |= d.cls == CounterClass::kError;
      retrans_grew |= d.cls == CounterClass::kRetransmit;
    }
  }
  if (!error_grew && !retrans_grew) ev.push_back({"grown", "none"});
  const Verdict v = error_grew ? Verdict::kFail : retrans_grew ? Verdict::kWarn : Verdict::kPass;
  out.results.push_back(makeResult("counters", port, v, std::move(ev),
                                   error_grew ? kErrorRemedy : kRetransmitRemedy));
}

void judgeTotals(const std::string& port, const std::map<std::string, uint64_t>& counters,
                 const std::string& why, DoctorReport& out) {
  std::vector<Evidence> ev = {{"baseline", why}};
  bool errors = false;
  for (const auto& [name, v] : counters) {
    const auto cls = classifyCounter(name);
    if (!cls || v == 0) continue;
    ev.push_back({name, std::to_string(v)});
    errors |= *cls == CounterClass::kError;
  }
  out.results.push_back(makeResult(
      "counters", port, errors ? Verdict::kWarn : Verdict::kPass, std::move(ev),
      "error counters are non-zero since the driver loaded: run again with --baseline FILE to "
      "see whether they still grow"));
}

}  // namespace

void checkCounters(const DoctorContext& ctx, DoctorReport& out) {
  out.counters = CounterSnapshot{.taken_at = ctx.now_unix};
  for (const auto& p : ctx.ports) {
    if (!p.rdma) continue;
    for (const auto& port : p.rdma->ports) {
      const std::string key = rdmaPortName(p.rdma->name, port.num);
      auto counters = readPortCounters(ctx.sysfs, p.rdma->name, port.num);
      if (!counters) {
        out.results.push_back(makeResult("counters", key, Verdict::kUnknown,
                                         {{"counters", "no counters/ or hw_counters/"}},
                                         "the driver exposes no port counters in sysfs"));
        continue;
      }
      out.counters.ports[key] = std::move(*counters);
    }
  }
  if (ctx.baseline) {
    out.has_baseline = true;
    out.baseline_taken_at = ctx.baseline->taken_at;
    out.deltas = counterDeltas(*ctx.baseline, out.counters);
  }
  for (const auto& [key, counters] : out.counters.ports) {
    if (!ctx.baseline) {
      judgeTotals(key, counters, "none", out);
    } else if (!ctx.baseline->ports.count(key)) {
      judgeTotals(key, counters, "port not in baseline", out);
    } else {
      judgeDeltas(key, ctx, out.deltas, out);
    }
  }
}

}  // namespace rdmanet::doctor
