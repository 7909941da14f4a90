#pragma once
// The device a pod's DRA claim holds, for a network whose deviceID Multus did not supply.
//
// Multus hands rdmanet a claim's device only from v4.3.1 on; before it, a pod whose VF came
// from a ResourceClaim gets no deviceID. The device plugin's DRA front records, when kubelet
// prepares the pod's claims (before the sandbox, so before this ADD), each pod's claimed
// devices under <draDevicesDir>/<pod UID>/<claim UID>.json
// (deviceplugin/dra/kubelet/pod_devices.h). A network names its pool (resourceName, e.g.
// "rdma/vf"); its device is the first of that pool in the pod's records (claims by UID, devices in
// allocation order) that another attachment of the same sandbox has not taken: a pod with two
// rdmanet networks of one pool gets two devices.
//
// The records' directory is the network's (a NAD's) choice, so it is read as a confined path
// (common/os/confined_path.h): beneath the node's draDevicesRoot (node_config.h), no symlink
// followed below the root, the pod's directory held open while its records are read and its
// network report written.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cni/conf/env.h"
#include "cni/conf/netconf.h"
#include "cni/state/state_store.h"
#include "common/base/fd.h"
#include "common/base/result.h"
#include "common/inventory/pci.h"

namespace rdmanet::cni {

// Where a network's DRA records are: its draDevicesDir, beneath the node's root for it.
struct DraRecordsDir {
  std::string root;  // NodeConfig::dra_devices_root
  std::string dir;   // NetConf::dra_devices_dir
};

// The pod's directory of records, held open (O_PATH); an empty Fd when it does not exist (the
// pod has no prepared claims). Error 7 for a malformed pod UID or a dir not beneath the root; 5
// naming the component when one below the root is a symlink or not a directory.
Result<Fd> openPodRecords(const DraRecordsDir& where, const std::string& pod_uid);

// Error 4 (kInvalidConfig) for a malformed pod UID; 6 (kDeviceNotFound) when the pod's records
// hold no device of the pool, or every one is `taken`; 5 when a record cannot be read; a record
// that does not parse is skipped (the daemon writes them whole: it is not ours).
Result<PciAddress> claimedDevice(const DraRecordsDir& where, const std::string& pod_uid,
                                 const std::string& resource_name,
                                 const std::set<std::string>& taken);

// Every device the pod's records hold, of any pool (device_owner.h: does the pod own a device
// it named?). Errors as claimedDevice's, except that no device is an empty list.
Result<std::vector<PciAddress>> podClaimedDevices(const DraRecordsDir& where,
                                                  const std::string& pod_uid);

// What the pod's records say of `pci`: its claim and DRA device, for its network report
// (claim_report.h), and the share of its port the claim holds, which sriov mode sets as the VF's
// max_tx_rate (vf_rate.h); nullopt when no record names it. Errors as claimedDevice's.
struct ClaimedDeviceRef {
  std::string claim_uid;
  std::string device;  // "" in records of older daemons: no report can name it
  // The record's "maxTxRateMbps", 1..kMaxBandwidthMbps (common/base/bandwidth_limit.h); none
  // when absent or malformed.
  std::optional<uint32_t> max_tx_rate_mbps{};
  // Why a "maxTxRateMbps" present was not taken (a wrong type or range), for the caller to log;
  // "" otherwise. A bad field costs the share, not the attachment: the rest of the record stands.
  std::string rate_problem{};
};
Result<std::optional<ClaimedDeviceRef>> claimOfDevice(const DraRecordsDir& where,
                                                      const std::string& pod_uid,
                                                      const PciAddress& pci);

// ADD and CHECK of a network with draDevicesDir but no deviceID (and no macvlan master): sets
// conf.device_id to the pod's claimed device. CHECK takes the device its ADD recorded; ADD skips
// the devices the sandbox's other attachments hold. Anything else is left as it is.
Status fillClaimedDevice(NetConf& conf, const CniEnv& env, const StateStore& store,
                         const std::string& dra_devices_root);

}  // namespace rdmanet::cni
