#include "deviceplugin/dra/apiserver/slice_devices.h"

#include <map>

#include "common/kube/quantity.h"
#include "deviceplugin/dra/apiserver/standard_attributes.h"
#include "deviceplugin/dra/device_attributes.h"

namespace rdmanet::dp {
namespace {

constexpr int64_t kBitsPerMbit = 1'000'000;

// The PF whose link a device's share is taken from, and that link's speed: set for a VF of a
// pool with a share whose PF's speed is known.
struct Partition {
  PciAddress pf{};
  int64_t port_mbps = 0;
  int64_t share_mbps = 0;
};
std::optional<Partition> partitionOf(const PoolDevice& p, const PoolConfig& pool) {
  if (!pool.vf_bandwidth_mbps || !p.pf || !p.port_speed_mbps) return std::nullopt;
  return Partition{
      .pf = *p.pf, .port_mbps = *p.port_speed_mbps, .share_mbps = *pool.vf_bandwidth_mbps};
}

}  // namespace

Result<dra::DraDevice> sliceDevice(const Sysfs& sysfs, const NodeDevice& d, const PoolConfig& pool,
                                   bool allow_multiple_allocations) {
  const PoolDevice& p = d.device;
  // rdmanet's attributes first, then the standard ones that read sysfs (pcieRoot, numaNode).
  dra::DraDevice out{.name = d.name, .attributes = deviceAttributes(d, pool)};
  RDMANET_RETURN_IF_ERROR(dra::addStandardAttributes(sysfs, p.pci, pool.fullName(), out));
  if (!p.healthy) out.taints.push_back({.key = std::string(dra::kUnhealthyTaintKey)});
  out.allow_multiple_allocations = d.shareable && allow_multiple_allocations;
  // A shared PF many claims take: its link speed as consumable capacity (KEP-5075), of which a
  // claim that names no bandwidth takes the pool's claimBandwidthMbps.
  if (out.allow_multiple_allocations && pool.claim_bandwidth_mbps && p.port_speed_mbps) {
    out.capacity[std::string(dra::kBandwidthCapacity)] =
        dra::DeviceCapacity(kube::decimalQuantity(int64_t{*p.port_speed_mbps} * kBitsPerMbit),
                            kube::decimalQuantity(*pool.claim_bandwidth_mbps * kBitsPerMbit));
  }
  if (auto part = partitionOf(p, pool)) {
    const std::string share = kube::decimalQuantity(part->share_mbps * kBitsPerMbit);
    out.capacity[std::string(dra::kBandwidthCapacity)] = share;
    out.consumes_counters.push_back({.counter_set = dra::pciDeviceName(part->pf),
                                     .counters = {{std::string(dra::kBandwidthCounter), share}}});
  }
  return out;
}

SliceContent sliceDevices(const Sysfs& sysfs, const DeviceSnapshot& snap,
                          bool allow_multiple_allocations, int* skipped) {
  SliceContent out;
  std::map<PciAddress, int64_t> ports;  // PF -> link speed, of the published VFs' partitions
  int failed = 0;
  for (const NodeDevice& d : snap.devices) {
    const Pool* pool = snap.pool(d.pool);
    auto dev = pool ? sliceDevice(sysfs, d, pool->config, allow_multiple_allocations)
                    : Result<dra::DraDevice>(makeError(ErrorCode::kInternal, "no pool"));
    if (dev.ok()) {
      out.devices.push_back(std::move(dev).value());
      if (auto part = partitionOf(d.device, pool->config)) ports[part->pf] = part->port_mbps;
    } else {
      ++failed;
    }
  }
  for (const auto& [pf, mbps] : ports) {
    out.counter_sets.push_back({.name = dra::pciDeviceName(pf),
                                .counters = {{std::string(dra::kBandwidthCounter),
                                              kube::decimalQuantity(mbps * kBitsPerMbit)}}});
  }
  if (skipped) *skipped = failed;
  return out;
}

}  // namespace rdmanet::dp
