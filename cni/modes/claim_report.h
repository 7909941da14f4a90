#pragma once
// The network report of a DRA claim's device (common/dra/net_report.h): what ADD made of the
// device (its interface, addresses and MAC, or the error that ended ADD), left for the device
// plugin's daemon, which writes it into the claim's status.devices[].networkData. The CNI has
// no cluster credentials; the daemon does, and it owns the directory the report goes to.
//
// Only for a network with draDevicesDir, and a device the pod's DRA records name (so the device
// is the pod's claim's, whichever way its deviceID came). Reporting never fails the verb: the
// pod's network does not depend on the claim's status; a report that cannot be written is
// logged.

#include <optional>
#include <string>

#include "cni/conf/env.h"
#include "cni/conf/logger.h"
#include "cni/conf/netconf.h"
#include "cni/conf/result_types.h"
#include "common/base/pci_address.h"
#include "common/base/result.h"

namespace rdmanet::cni {

// After ADD of conf.device_id: writes the report of `result` (its interface env.ifname and that
// interface's addresses) or of its error.
// `dra_devices_root` is the node's root for draDevicesDir (node_config.h): the report goes into
// the pod's records directory as claimed_device.h opens it, never through a symlink.
void reportAdd(const CniEnv& env, const NetConf& conf, const std::string& dra_devices_root,
               const Result<CniResult>& result, Logger& log);
// After a successful DEL of the attachment that held `pci`: removes the device's report when it
// is a successful ADD's of this container and interface. A failed ADD's report stays (it is
// what the claim's status should go on saying until an ADD succeeds or the claim is
// unprepared), and so does a newer sandbox's.
void withdrawReport(const CniEnv& env, const NetConf& conf, const std::string& dra_devices_root,
                    const PciAddress& pci, Logger& log);

}  // namespace rdmanet::cni
