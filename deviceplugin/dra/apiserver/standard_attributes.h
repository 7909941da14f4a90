#pragma once
// The attributes every rdmanet DRA device carries that other components read by name:
//   resource.kubernetes.io/pcieRoot   string  pci<domain>:<bus> (pcie_root.h, upstream's rule)
//   resource.kubernetes.io/pciBusID   string  "0000:81:00.2"
//   resource.kubernetes.io/numaNode   int     when sysfs reports one (>= 0)
//   k8s.cni.cncf.io/deviceID          string  the PCI address (Multus's DRA support)
//   k8s.cni.cncf.io/resourceName      string  e.g. "rdma/vf", equal to the NAD's
//                                             k8s.v1.cni.cncf.io/resourceName
// rdmanet's own (rdmanet.io/...) are the pool core's to add.

#include <string>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/base/sysfs.h"
#include "deviceplugin/dra/dra_device.h"

namespace rdmanet::dra {

// Adds the attributes above to `device` (replacing same-named ones). Errors from pcieRoot()
// (100: no such function, 7: an odd sysfs link); nothing is added then.
Status addStandardAttributes(const Sysfs& sysfs, const PciAddress& addr,
                             const std::string& resource_name, DraDevice& device);

}  // namespace rdmanet::dra
