#pragma once
// Latency summary shared by the benchmark clients (tests/deviceplugin/bench/*_client.cc):
// percentiles of a set of microsecond samples, as one JSON object.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace rdmanet::bench {

inline nlohmann::json latencyStats(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) {
    return us.empty() ? 0 : us[static_cast<size_t>(p * (us.size() - 1))];
  };
  double sum = 0;
  for (double v : us) sum += v;
  return {{"n", us.size()},
          {"p50_us", pct(0.5)},
          {"p90_us", pct(0.9)},
          {"p99_us", pct(0.99)},
          {"max_us", us.empty() ? 0 : us.back()},
          {"mean_us", us.empty() ? 0 : sum / us.size()}};
}

}  // namespace rdmanet::bench
