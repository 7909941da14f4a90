// CPU: the frequency governor and deep C-states. Both add latency jitter to the CPU side of
// every collective (proxy threads, kernel launches): P99 spikes in small-message all-reduce.
#include <fmt/format.h>

#include <map>

#include "deviceplugin/doctor/context.h"

namespace rdmanet::doctor {
namespace {

constexpr const char* kCpuDir = "/sys/devices/system/cpu";
// C1 (halt) wakes in 1-2 us; anything slower (C1E, C3, C6, AMD C2) counts as deep.
constexpr long long kDeepLatencyUs = 5;

std::vector<std::string> cpus(const Sysfs& sysfs) {
  std::vector<std::string> out;
  for (const auto& e : sysfs.list(kCpuDir)) {
    if (e.size() > 3 && e.starts_with("cpu") &&
        e.find_first_not_of("0123456789", 3) == std::string::npos) {
      out.push_back(e);
    }
  }
  return out;
}

std::string counts(const std::map<std::string, int>& m) {
  std::vector<std::string> parts;
  parts.reserve(m.size());
  for (const auto& [k, n] : m) parts.push_back(fmt::format("{}:{}", k, n));
  return join(parts, ",");
}

void governor(const DoctorContext& ctx, const std::vector<std::string>& cpu_list,
              DoctorReport& out) {
  std::map<std::string, int> by_gov;
  for (const auto& c : cpu_list) {
    if (auto g = ctx.sysfs.readOpt(fmt::format("{}/{}/cpufreq/scaling_governor", kCpuDir, c))) {
      ++by_gov[*g];
    }
  }
  if (by_gov.empty()) {
    out.results.push_back(makeResult(
        "cpu_governor", "node", Verdict::kUnknown,
        {{"cpus", std::to_string(cpu_list.size())}, {"governors", "no cpufreq"}},
        "no cpufreq in sysfs (firmware or hypervisor controls frequency): set the BIOS power "
        "profile to maximum performance"));
    return;
  }
  const bool all_perf = by_gov.size() == 1 && by_gov.begin()->first == "performance";
  out.results.push_back(makeResult(
      "cpu_governor", "node", all_perf ? Verdict::kPass : Verdict::kWarn,
      {{"cpus", std::to_string(cpu_list.size())}, {"governors", counts(by_gov)}},
      "set the performance governor (cpupower frequency-set -g performance): frequency ramps "
      "add latency jitter (P99 spikes)"));
}

void cstates(const DoctorContext& ctx, const std::vector<std::string>& cpu_list,
             DoctorReport& out) {
  const auto driver = ctx.sysfs.readOpt(std::string(kCpuDir) + "/cpuidle/current_driver");
  std::map<std::string, int> deep;  // "C6 (133us)" -> cpus with it enabled
  bool any_state = false;
  for (const auto& c : cpu_list) {
    const std::string dir = fmt::format("{}/{}/cpuidle", kCpuDir, c);
    for (const auto& s : ctx.sysfs.list(dir)) {
      if (!s.starts_with("state")) continue;
      any_state = true;
      const std::string sd = fmt::format("{}/{}", dir, s);
      const auto latency = ctx.sysfs.readInt(sd + "/latency");
      const bool disabled = ctx.sysfs.readInt(sd + "/disable").value_or(0) != 0;
      if (!latency || *latency <= kDeepLatencyUs || disabled) continue;
      ++deep[fmt::format("{} ({}us)", ctx.sysfs.readOpt(sd + "/name").value_or(s), *latency)];
    }
  }
  std::vector<Evidence> ev = {{"cpuidle_driver", driver.value_or("unknown")}};
  if (!any_state) {
    // No cpuidle driver: the kernel idles with plain halt (C1), which wakes fast.
    const bool none = driver == "none";
    ev.push_back({"deep_states", none ? "none (no cpuidle driver: halt only)" : "unknown"});
    out.results.push_back(makeResult("cpu_cstates", "node",
                                     none ? Verdict::kPass : Verdict::kUnknown, std::move(ev),
                                     "cpuidle states not readable: check `cpupower idle-info`"));
    return;
  }
  std::vector<std::string> parts;
  parts.reserve(deep.size());
  for (const auto& [name, n] : deep) parts.push_back(fmt::format("{} on {} cpus", name, n));
  ev.push_back({"deep_states", parts.empty() ? "none enabled" : join(parts, ", ")});
  out.results.push_back(makeResult(
      "cpu_cstates", "node", deep.empty() ? Verdict::kPass : Verdict::kWarn, std::move(ev),
      "disable deep C-states (cpupower idle-set -D 5, or intel_idle.max_cstate=1 / BIOS): "
      "wake-up latency shows as jitter (P99 spikes)"));
}

}  // namespace

void checkCpu(const DoctorContext& ctx, DoctorReport& out) {
  const auto cpu_list = cpus(ctx.sysfs);
  if (cpu_list.empty()) {
    out.results.push_back(makeResult("cpu_governor", "node", Verdict::kUnknown,
                                     {{"cpus", "none listed in " + std::string(kCpuDir)}},
                                     "check the sysfs root"));
    return;
  }
  governor(ctx, cpu_list, out);
  cstates(ctx, cpu_list, out);
}

}  // namespace rdmanet::doctor
