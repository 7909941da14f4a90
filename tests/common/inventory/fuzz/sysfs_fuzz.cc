// libFuzzer target over sysfs discovery (common/inventory): the name, number, link and PCI
// address parsers as a node scan meets them, on a simulated node's tree whose attribute files
// the input rewrites or removes (tests/fuzz/sysfs_mutator.h; seeds: the tree as the simulated
// node writes it, and edits in the shapes real drivers give). Each record's content also goes to
// the string parsers directly. Invariants: no crash, no exception; every name discovery returns
// is a valid interface name.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/base/mac_address.h"
#include "common/base/pci_address.h"
#include "common/base/sysfs.h"
#include "common/inventory/netdev.h"
#include "common/inventory/node.h"
#include "common/inventory/pci.h"
#include "common/inventory/rdma.h"
#include "common/inventory/rdma_counters.h"
#include "common/inventory/topology.h"
#include "tests/fuzz/sysfs_mutator.h"

using namespace rdmanet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::SysfsMutator tree_at_exit_removed;  // a static: its temp tree goes at exit
  fuzz::SysfsMutator* tree = &tree_at_exit_removed;
  for (std::string_view s : tree->apply(std::span<const uint8_t>(data, size))) {
    (void)PciAddress::parse(s);
    (void)MacAddress::parse(s);
    (void)functionOfDevpath(s);
    (void)isValidIfName(s);
  }
  const Sysfs sysfs(tree->root());
  const NodeInventory inv = scanNode(sysfs);
  for (const auto& nic : inv.nics) {
    for (const auto& nd : nic.netdevs) {
      if (!isValidIfName(nd.name)) __builtin_trap();
    }
  }
  NodeInventory again = inv;
  (void)rescanPf(sysfs, *PciAddress::parse("0000:81:00.0"), again);
  (void)readNetdev(sysfs, "ens1f0np0");
  for (const auto& name : listRdmaDevices(sysfs)) {
    (void)readRdmaDevice(sysfs, name);
    for (int port : rdmaPorts(sysfs, name)) (void)readPortCounters(sysfs, name, port);
  }
  (void)readPlacement(sysfs, *PciAddress::parse("0000:81:00.2"));
  tree->restore();
  return 0;
}
