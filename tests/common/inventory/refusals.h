#pragma once
// A Sysfs observer that records the names discovery refused ("<dir>/<name>", raw bytes).

#include <string>
#include <string_view>
#include <vector>

#include "common/base/sysfs.h"

namespace rdmanet::testing {

class Refusals : public SysfsObserver {
 public:
  void onSysfsOp(SysfsOp, std::string_view) override {}
  void onRefusedName(std::string_view dir, std::string_view name) override {
    seen.emplace_back(std::string(dir) + "/" + std::string(name));
  }
  std::vector<std::string> seen;
};

}  // namespace rdmanet::testing
