#include "common/inventory/rdma_counters.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rdmanet {
namespace {

std::optional<uint64_t> parseU64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::map<std::string, uint64_t>> readPortCounters(const Sysfs& sysfs,
                                                                const std::string& dev, int port) {
  const std::string base = fmt::format("/sys/class/infiniband/{}/ports/{}", dev, port);
  std::optional<std::map<std::string, uint64_t>> out;
  for (const char* sub : {"counters", "hw_counters"}) {
    const std::string dir = base + "/" + sub;
    if (!sysfs.exists(dir)) continue;
    if (!out) out.emplace();
    for (const auto& name : sysfs.list(dir)) {
      const auto text = sysfs.readOpt(fmt::format("{}/{}", dir, name));
      if (!text) continue;
      if (auto v = parseU64(*text)) (*out)[name] = *v;
    }
  }
  return out;
}

std::vector<int> rdmaPorts(const Sysfs& sysfs, const std::string& dev) {
  std::vector<int> out;
  for (const auto& name : sysfs.list(fmt::format("/sys/class/infiniband/{}/ports", dev))) {
    if (auto n = parseU64(name); n && *n > 0 && *n < 256) out.push_back(static_cast<int>(*n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rdmanet
