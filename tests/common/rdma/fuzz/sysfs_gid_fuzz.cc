// libFuzzer target over the RDMA port facts read from sysfs (common/rdma/rdma_verbs.h: the GID
// table with its types, rate, state) on a simulated node's tree whose attribute files the input
// rewrites or removes (tests/fuzz/sysfs_mutator.h), and over the GID type and rate parsers on
// each record's content. Invariants: no crash, no exception; every GID type that comes out has a
// name.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/base/sysfs.h"
#include "common/inventory/rdma.h"
#include "common/rdma/rdma_verbs.h"
#include "tests/fuzz/sysfs_mutator.h"

using namespace rdmanet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::SysfsMutator tree_at_exit_removed;  // a static: its temp tree goes at exit
  fuzz::SysfsMutator* tree = &tree_at_exit_removed;
  for (std::string_view s : tree->apply(std::span<const uint8_t>(data, size))) {
    (void)gidTypeName(parseGidType(s));
    (void)parseRateGbps(s);
  }
  const Sysfs sysfs(tree->root());
  for (const auto& name : listRdmaDevices(sysfs)) {
    auto dev = readRdmaDevice(sysfs, name);
    if (!dev.ok()) continue;
    const DeviceFacts facts = factsFromSysfs(sysfs, *dev);
    for (const auto& port : facts.ports) {
      for (const auto& gid : port.gids) {
        if (gidTypeName(gid.type).empty()) __builtin_trap();
      }
    }
  }
  tree->restore();
  return 0;
}
