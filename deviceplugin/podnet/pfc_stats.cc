#include "deviceplugin/podnet/pfc_stats.h"

#include <map>
#include <regex>
#include <tuple>

namespace rdmanet::podnet {

std::vector<PfcCounter> pfcCounters(const EthtoolStats& stats) {
  // Matched once per statistic of each port per scrape; mlx5 ports have ~1,000, so a cheap
  // prefix test runs before the regex.
  static const std::regex kMlx5(R"((rx|tx)_prio([0-7])_pause(_duration)?)");
  static const std::regex kIce(R"((rx|tx)_priority_([0-7])_xoff\.nic)");
  std::map<std::pair<int, std::string>, PfcCounter> by_key;
  std::smatch m;
  for (const auto& [name, value] : stats) {
    if (name.size() < 10 || (name[0] != 'r' && name[0] != 't') || name.find("_pri") != 2) continue;
    bool duration = false;
    if (std::regex_match(name, m, kMlx5)) {
      duration = m[3].matched;
    } else if (!std::regex_match(name, m, kIce)) {
      continue;
    }
    const int prio = m[2].str()[0] - '0';
    PfcCounter& c = by_key[{prio, m[1].str()}];
    c.priority = prio;
    c.direction = m[1].str();
    if (duration) {
      c.duration_us = value;
    } else {
      c.frames = value;
    }
  }
  std::vector<PfcCounter> out;
  out.reserve(by_key.size());
  for (auto& [k, c] : by_key) out.push_back(std::move(c));
  return out;
}

}  // namespace rdmanet::podnet
