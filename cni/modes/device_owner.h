#pragma once
// Whose device is it? A device the pod itself named must be the pod's.
//
// Two channels carry a device the pod chooses: runtimeConfig.deviceID, which Multus fills from
// the pod's network annotation ("deviceID") whenever the pod requested no resource or claim for
// the network, and anything a runtime passes on its behalf there. The device Multus resolved from
// kubelet's allocation arrives as the netconf's own "deviceID"/"pciBusID" (Multus writes them
// into the delegate's config), as does one the NAD's author names: those are trusted. A
// runtimeConfig.deviceID that differs from them is used only when the pod owns it:
// - kubelet's device manager allocated it to this pod (kubelet_checkpoint.h), or
// - the device plugin's DRA records for this pod name it (claimed_device.h), when the network
//   has a draDevicesDir.
// The pod is K8S_POD_UID from CNI_ARGS.

#include <string>

#include "cni/conf/env.h"
#include "cni/modes/claimed_device.h"
#include "common/base/pci_address.h"
#include "common/base/result.h"

namespace rdmanet::cni {

struct OwnerRecords {
  std::string kubelet_checkpoint;  // PluginDeps::kubelet_checkpoint
  DraRecordsDir dra_devices;       // the network's draDevicesDir ("" for none) and its root
};

// OK when the pod of `args` owns `device`. Error 7 naming the device, the key it came from, the
// pod and the records looked at otherwise (no K8S_POD_UID: no pod can own it); error 5 when a
// record cannot be read.
Status checkPodOwnsDevice(const PciAddress& device, std::string_view key, const CniArgs& args,
                          const OwnerRecords& records);

}  // namespace rdmanet::cni
