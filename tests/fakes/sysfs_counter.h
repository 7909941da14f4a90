#pragma once
// SysfsCounter: counts the operations a Sysfs makes (common/base/sysfs.h), in total, by kind
// and by path. Tests bound a scan's cost with it deterministically: how the count grows with the
// node, and how often the same path is touched, instead of how long the scan takes.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/base/sysfs.h"

namespace rdmanet {

class SysfsCounter : public SysfsObserver {
 public:
  void onSysfsOp(SysfsOp op, std::string_view abs) override {
    std::lock_guard lock(mu_);
    ++by_op_[op];
    ++by_path_[std::string(abs)];
  }

  uint64_t total() const {
    std::lock_guard lock(mu_);
    uint64_t n = 0;
    for (const auto& [op, c] : by_op_) n += c;
    return n;
  }
  uint64_t count(SysfsOp op) const {
    std::lock_guard lock(mu_);
    auto it = by_op_.find(op);
    return it == by_op_.end() ? 0 : it->second;
  }
  // The path touched most often, and how often (first by name on a tie, for stable messages).
  std::pair<std::string, uint64_t> hottest() const {
    std::lock_guard lock(mu_);
    std::pair<std::string, uint64_t> best;
    for (const auto& [path, c] : by_path_) {
      if (c > best.second || (c == best.second && path < best.first)) best = {path, c};
    }
    return best;
  }
  void reset() {
    std::lock_guard lock(mu_);
    by_op_.clear();
    by_path_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::map<SysfsOp, uint64_t> by_op_;
  std::unordered_map<std::string, uint64_t> by_path_;
};

}  // namespace rdmanet
