#include "deviceplugin/dra/device_attributes.h"

#include "common/inventory/topology.h"

namespace rdmanet::dp {

std::map<std::string, dra::AttributeValue> deviceAttributes(const NodeDevice& d,
                                                            const PoolConfig& pool) {
  const PoolDevice& p = d.device;
  std::map<std::string, dra::AttributeValue> out;
  auto str = [&](std::string_view key, const std::string& v) {
    if (!v.empty()) out[std::string(key)] = v;
  };
  auto num = [&](std::string_view key, int64_t v) { out[std::string(key)] = v; };
  str(dra::kAttrPciBusId, p.pci.str());
  if (p.numa_node >= 0) num(dra::kAttrNumaNode, p.numa_node);
  str(dra::kAttrMultusDeviceId, p.pci.str());
  str(dra::kAttrMultusResourceName, pool.fullName());
  str("rdmanet.io/pool", pool.fullName());
  str("rdmanet.io/pfName", p.pf ? p.pf_netdev : p.netdev);
  str("rdmanet.io/pfPciAddress", p.pfAddress().str());
  if (p.vf_index) num("rdmanet.io/vfIndex", *p.vf_index);
  str("rdmanet.io/rdmaDevice", p.rdma_device);
  str("rdmanet.io/netdev", p.netdev);
  str("rdmanet.io/linkType", p.link_type);
  if (pool.lossless && pool.lossless->priority) {
    num("rdmanet.io/losslessPriority", *pool.lossless->priority);
  }
  if (pool.lossless && pool.lossless->dscp) num("rdmanet.io/losslessDscp", *pool.lossless->dscp);
  if (p.gpu_distance) str("rdmanet.io/gpuDistance", std::string(distanceName(*p.gpu_distance)));
  // The switch port the device's port is cabled to (LLDP) and its rail: what a claim selects to
  // keep a job on one rail. A value longer than the API allows is left out rather than cut, so
  // that a selector never matches a truncated name.
  auto fits = [&](std::string_view key, const std::string& v) {
    if (v.size() <= dra::kMaxAttributeValueLength) str(key, v);
  };
  fits("rdmanet.io/rail", p.rail);
  if (p.neighbor) {
    fits("rdmanet.io/switchName", p.neighbor->system_name);
    fits("rdmanet.io/switchChassisId", p.neighbor->chassis_id);
    fits("rdmanet.io/switchPortId", p.neighbor->port_id);
  }
  return out;
}

}  // namespace rdmanet::dp
