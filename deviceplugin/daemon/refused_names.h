#pragma once
// The daemon's Sysfs observer: a warning for each name discovery refuses (common/inventory: a
// netdev or RDMA device name that is not printable ASCII, which a pod with NET_ADMIN can leave on
// the host), so an operator learns why a device shows without its netdev. Each name is logged
// once per directory, its bytes escaped (\xff): the scan runs again on every resync.

#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "common/base/sysfs.h"

namespace rdmanet::dp {

// "ens1\xff": printable ASCII as it is, every other byte (and '\') as \xHH.
std::string escapeName(std::string_view raw);

class RefusedNameLog final : public SysfsObserver {
 public:
  // More refused names than this are not remembered (each is logged again after a reset): the
  // set stays small whatever a tenant does.
  static constexpr size_t kMaxRemembered = 256;

  void onSysfsOp(SysfsOp, std::string_view) override {}
  void onRefusedName(std::string_view dir, std::string_view name) override;

 private:
  std::mutex mu_;
  std::set<std::string> logged_;  // "<dir>/<escaped name>"
};

}  // namespace rdmanet::dp
