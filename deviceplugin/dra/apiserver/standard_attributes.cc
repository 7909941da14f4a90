#include "deviceplugin/dra/apiserver/standard_attributes.h"

#include "deviceplugin/dra/apiserver/pcie_root.h"

namespace rdmanet::dra {

Status addStandardAttributes(const Sysfs& sysfs, const PciAddress& addr,
                             const std::string& resource_name, DraDevice& device) {
  RDMANET_ASSIGN_OR_RETURN(std::string root, pcieRoot(sysfs, addr));
  auto& a = device.attributes;
  a[std::string(kAttrPcieRoot)] = std::move(root);
  a[std::string(kAttrPciBusId)] = addr.str();
  const auto numa = sysfs.readInt("/sys/bus/pci/devices/" + addr.str() + "/numa_node");
  if (numa && *numa >= 0) a[std::string(kAttrNumaNode)] = static_cast<int64_t>(*numa);
  a[std::string(kAttrMultusDeviceId)] = addr.str();
  if (!resource_name.empty()) a[std::string(kAttrMultusResourceName)] = resource_name;
  return okStatus();
}

}  // namespace rdmanet::dra
