#include "deviceplugin/dra/apiserver/slice_devices.h"

#include "deviceplugin/dra/apiserver/standard_attributes.h"

namespace rdmanet::dp {

Result<dra::DraDevice> sliceDevice(const Sysfs& sysfs, const NodeDevice& d, const PoolConfig& pool,
                                   bool allow_multiple_allocations) {
  const PoolDevice& p = d.device;
  dra::DraDevice out{.name = d.name};
  RDMANET_RETURN_IF_ERROR(dra::addStandardAttributes(sysfs, p.pci, pool.fullName(), out));
  auto str = [&](const char* key, const std::string& v) {
    if (!v.empty()) out.attributes[key] = v;
  };
  str("rdmanet.io/pool", pool.fullName());
  str("rdmanet.io/pfName", p.pf ? p.pf_netdev : p.netdev);
  str("rdmanet.io/pfPciAddress", p.pfAddress().str());
  if (p.vf_index) out.attributes["rdmanet.io/vfIndex"] = int64_t{*p.vf_index};
  str("rdmanet.io/rdmaDevice", p.rdma_device);
  str("rdmanet.io/netdev", p.netdev);
  str("rdmanet.io/linkType", p.link_type);
  if (pool.lossless && pool.lossless->priority) {
    out.attributes["rdmanet.io/losslessPriority"] = int64_t{*pool.lossless->priority};
  }
  if (pool.lossless && pool.lossless->dscp) {
    out.attributes["rdmanet.io/losslessDscp"] = int64_t{*pool.lossless->dscp};
  }
  if (p.gpu_distance) str("rdmanet.io/gpuDistance", std::string(distanceName(*p.gpu_distance)));
  if (!p.healthy) out.taints.push_back({.key = std::string(dra::kUnhealthyTaintKey)});
  out.allow_multiple_allocations = d.shareable && allow_multiple_allocations;
  return out;
}

std::vector<dra::DraDevice> sliceDevices(const Sysfs& sysfs, const DeviceSnapshot& snap,
                                         bool allow_multiple_allocations, int* skipped) {
  std::vector<dra::DraDevice> out;
  int failed = 0;
  for (const NodeDevice& d : snap.devices) {
    const Pool* pool = snap.pool(d.pool);
    auto dev = pool ? sliceDevice(sysfs, d, pool->config, allow_multiple_allocations)
                    : Result<dra::DraDevice>(makeError(ErrorCode::kInternal, "no pool"));
    if (dev.ok()) {
      out.push_back(std::move(dev).value());
    } else {
      ++failed;
    }
  }
  if (skipped) *skipped = failed;
  return out;
}

}  // namespace rdmanet::dp
