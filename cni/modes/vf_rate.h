#pragma once
// The tx rates of an attached VF: the netconf's min_tx_rate/max_tx_rate, capped by the share of
// its PF's link the pod's DRA claim holds (issue 32: a VF as a partition of its PF). The device
// plugin records the share of a pool with vfBandwidthMbps as the device's "maxTxRateMbps"
// (deviceplugin/dra/kubelet/pod_devices.h); the scheduler counts it against the PF's link speed,
// and only a cap on the VF makes that count true on the wire.
//
// sriov mode sets the result through the PF as the knob "rate" (mode_sriov.cc), which DEL, GC,
// rollback and crash recovery restore. macvlan mode shapes the pod's macvlan egress to the share
// of its deviceID (a shared PF's claim, mode_macvlan.cc): the kernel's traffic only, RoCE
// bypasses the qdisc. host-device mode cannot cap a VF: ADD succeeds, and logs that the share is
// not enforced.

#include <cstdint>
#include <optional>

#include "cni/conf/env.h"
#include "cni/conf/netconf.h"
#include "cni/modes/mode.h"
#include "cni/modes/plugin_deps.h"
#include "common/base/pci_address.h"
#include "common/base/result.h"

namespace rdmanet::cni {

struct VfRate {
  uint32_t min_mbps = 0;
  uint32_t max_mbps = 0;  // 0: no limit
  bool operator==(const VfRate&) const = default;
};

// What asks for a VF's rates. Mbit/s throughout.
struct VfRateAsks {
  std::optional<uint32_t> nad_min{};    // NetConf::min_tx_rate
  std::optional<uint32_t> nad_max{};    // NetConf::max_tx_rate (0: no limit)
  std::optional<uint32_t> claim_max{};  // the claim's share, 1 and up
  VfRate orig{};                        // the VF's before ADD: kept where nothing asks
};

// The rates to set; nullopt when neither the netconf nor the claim names one (the VF's rates are
// left alone). With a share, max is the netconf's max when that is set, nonzero and lower, else
// the share; min stays the netconf's (else the VF's). Error 7 when that min is above max: the VF
// could never honour it.
Result<std::optional<VfRate>> vfRateFor(const VfRateAsks& asks);

// The share the pod's DRA records give `pci` (claimed_device.h): none without draDevicesDir,
// K8S_POD_UID or a record naming `pci`. Records that cannot be read and a malformed share are
// logged and give none, as they give no network report (claim_report.h): the network's author
// asks for the share by naming draDevicesDir, so failing ADD over a bad one would guard nothing.
std::optional<uint32_t> claimedShare(const PluginDeps& deps, const CniEnv& env, const NetConf& conf,
                                     const std::optional<PciAddress>& pci);

// The function whose claim's share a macvlan on `master` takes: its deviceID (the claim's device,
// as Multus passes it; a macvlan attaches its master, not that device), else the master's own
// function (a shared pool's claimed PF is the master itself). None without either, and without
// draDevicesDir or K8S_POD_UID (no record to read: the master's sysfs is not walked).
std::optional<PciAddress> macvlanClaimedPci(const PluginDeps& deps, const CniEnv& env,
                                            const NetConf& conf, const std::string& master);

// ADD's share to enforce for `dev`: claimedShare in sriov mode, and in macvlan mode that of
// macvlanClaimedPci. In host-device mode, which cannot cap a VF, a share is logged as not enforced
// and none is returned.
std::optional<uint32_t> shareToEnforce(const PluginDeps& deps, const CniEnv& env,
                                       const NetConf& conf, const ResolvedDevice& dev);

}  // namespace rdmanet::cni
