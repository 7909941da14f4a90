#pragma once
// The standard attribute resource.kubernetes.io/pcieRoot of a PCI function, computed exactly as
// the upstream helper does (k8s.io/dynamic-resource-allocation/deviceattribute, pci_linux.go,
// GetPCIeRootAttributeByPCIBusID), so that a NIC's value equals a GPU driver's value for a GPU
// behind the same root complex and a claim's `matchAttribute: resource.kubernetes.io/pcieRoot`
// constraint pairs them:
//   - read the symlink /sys/bus/pci/devices/<bdf> (one readlink; a relative target is joined to
//     the link's directory and cleaned);
//   - the target must start with /sys/devices/pci and end with <bdf>;
//   - the value is the first path component after /sys/devices/, e.g. "pci0000:80".

#include <string>

#include "common/base/pci_address.h"
#include "common/base/result.h"
#include "common/base/sysfs.h"

namespace rdmanet::dra {

// Error 100 when /sys/bus/pci/devices/<bdf> is not a symlink (no such function); error 7 when
// its target is not under /sys/devices/pci* or does not end in the address.
Result<std::string> pcieRoot(const Sysfs& sysfs, const PciAddress& addr);

}  // namespace rdmanet::dra
