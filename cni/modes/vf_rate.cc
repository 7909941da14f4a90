#include "cni/modes/vf_rate.h"

#include <fmt/format.h>

#include <algorithm>

#include "cni/modes/claimed_device.h"
#include "common/inventory/netdev.h"

namespace rdmanet::cni {

Result<std::optional<VfRate>> vfRateFor(const VfRateAsks& a) {
  if (!a.claim_max) {
    if (!a.nad_min && !a.nad_max) return std::optional<VfRate>();
    return std::optional<VfRate>(VfRate{.min_mbps = a.nad_min.value_or(a.orig.min_mbps),
                                        .max_mbps = a.nad_max.value_or(a.orig.max_mbps)});
  }
  const uint32_t share = *a.claim_max;
  const uint32_t nad_max = a.nad_max.value_or(0);
  const uint32_t max = nad_max != 0 ? std::min(nad_max, share) : share;
  const VfRate out{.min_mbps = a.nad_min.value_or(a.orig.min_mbps), .max_mbps = max};
  if (out.min_mbps > out.max_mbps) {
    return makeError(
        ErrorCode::kInvalidConfig,
        fmt::format("{} {} Mbit/s is above the {} Mbit/s of its port the pod's DRA claim holds: "
                    "the VF could never honour it",
                    a.nad_min ? "\"min_tx_rate\"" : "the VF's min_tx_rate", out.min_mbps, share),
        a.nad_min ? "lower the network's min_tx_rate, or raise the pool's vfBandwidthMbps"
                  : "clear the VF's min_tx_rate on its PF (ip link set <pf> vf <n> min_tx_rate 0)");
  }
  return std::optional<VfRate>(out);
}

std::optional<uint32_t> claimedShare(const PluginDeps& deps, const CniEnv& env, const NetConf& conf,
                                     const std::optional<PciAddress>& pci) {
  if (!pci || conf.dra_devices_dir.empty() || env.args.pod_uid.empty()) return std::nullopt;
  auto ref = claimOfDevice({.root = deps.node.dra_devices_root, .dir = conf.dra_devices_dir},
                           env.args.pod_uid, *pci);
  if (!ref.ok()) {
    deps.log.warn("no DRA claim share of {}'s port is enforced: its records were not read: {}",
                  pci->str(), ref.error().msg);
    return std::nullopt;
  }
  if (!*ref) return std::nullopt;
  if (!(*ref)->rate_problem.empty()) {
    deps.log.warn(
        "no DRA claim share of {}'s port is enforced: the record of claim {} gives none "
        "usable: {}",
        pci->str(), (*ref)->claim_uid, (*ref)->rate_problem);
  }
  return (*ref)->max_tx_rate_mbps;
}

std::optional<PciAddress> macvlanClaimedPci(const PluginDeps& deps, const CniEnv& env,
                                            const NetConf& conf, const std::string& master) {
  if (conf.device_id) return conf.device_id;
  // Only when a record could give a share: the sysfs walk is most of a macvlan ADD's file I/O.
  if (conf.dra_devices_dir.empty() || env.args.pod_uid.empty()) return std::nullopt;
  auto nd = readNetdev(deps.sysfs, master);
  return nd.ok() ? nd->pci : std::nullopt;
}

std::optional<uint32_t> shareToEnforce(const PluginDeps& deps, const CniEnv& env,
                                       const NetConf& conf, const ResolvedDevice& dev) {
  const std::optional<PciAddress> pci =
      dev.mode == Mode::kMacvlan ? macvlanClaimedPci(deps, env, conf, dev.netdev) : dev.pci;
  const std::optional<uint32_t> share = claimedShare(deps, env, conf, pci);
  if (dev.mode != Mode::kHostDevice || !share || !pci) return share;
  deps.log.warn(
      "the pod's DRA claim holds {} Mbit/s of {}'s port, which is NOT enforced: {} "
      "mode cannot cap a VF's rate (only mode sriov sets its max_tx_rate)",
      *share, pci->str(), modeName(dev.mode));
  return std::nullopt;
}

}  // namespace rdmanet::cni
