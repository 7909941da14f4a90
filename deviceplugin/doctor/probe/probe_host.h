#pragma once
// What the probe reads from the host around its RDMA work (the tcp exchange and the MTU sweep):
// interfaces (address, MAC, MTU), the RDMA devices this process can see with their GIDs, and a
// port's hw_counters. sysfs and getifaddrs only; all of it in the caller's netns.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/doctor/probe/exchange_wire.h"

namespace rdmanet::doctor::probe {

// The interface named `name`: its first IPv4 address, MAC and MTU. Error 100 when it is absent.
Result<exchange::InterfaceFacts> interfaceFacts(const std::string& name);
// The MTU of interface `name` (0 when unreadable).
int interfaceMtu(const std::string& name);
// The interface holding IPv4 address `ipv4`; empty when none does.
std::string interfaceOfAddress(const std::string& ipv4);
// Every RDMA device libibverbs lists, with port 1's valid GIDs and node GUID.
std::vector<exchange::DeviceCandidate> rdmaCandidates();
// The port's hw counters, by name: over RDMA netlink (common/net/rdma_hw_stats.h), else from
// /sys/class/infiniband/DEV/ports/PORT/hw_counters/* (unreadable ones left out).
std::map<std::string, uint64_t> readHwCounters(const std::string& device, int port);
// The counters of `after` that grew since `before` (a counter that went backwards is skipped).
std::map<std::string, uint64_t> counterGrowth(const std::map<std::string, uint64_t>& before,
                                              const std::map<std::string, uint64_t>& after);

}  // namespace rdmanet::doctor::probe
