#pragma once
// The pod → device records of prepared claims, which let the rdmanet CNI find the device a
// pod's claim holds without Multus's help (cni/modes/claimed_device.h reads them).
//
// Multus hands the CNI a claim's device only from v4.3.1 on (it reads the claim's allocation
// through resource.k8s.io/v1); every released Multus before it looks the device up in kubelet's
// pod-resources API by the claim's object name, which a ResourceClaimTemplate generates, so it
// never finds it. Kubelet prepares a pod's claims before it creates the sandbox (and so before
// CNI ADD): prepare writes, for every pod the claim is reserved for,
//   <dir>/<pod UID>/<claim UID>.json
//   {"claim": {"namespace", "name", "uid"},
//    "devices": [{"request", "resourceName", "pciAddress", "device"[, "maxTxRateMbps"]}, ...]}
// ("maxTxRateMbps": the claim's share of the device's port: what its allocation consumed of a
// shared device's rdmanet.io/bandwidth, else the pool's vfBandwidthMbps, the share of its PF's
// link the VF stands for; the CNI caps a VF's max_tx_rate or shapes a macvlan's egress at it;
// absent when neither is known), written
// atomically (0644: the CNI runs as root, the content is no secret; not fsynced: the dir is on
// tmpfs, like the CDI specs), and unprepare removes it.
// A pod dir left empty is removed with its last claim. At start the records are reconciled with
// the checkpoint: a record whose claim is no longer prepared is removed.

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "common/base/result.h"
#include "common/kube/resource_claim.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

// The pod UIDs a claim is reserved for (status.reservedFor entries of resource "pods" in the
// core group), each a valid UID. Entries with a malformed UID are skipped: the claim is the API
// server's.
std::set<std::string> reservedPods(const kube::ResourceClaim& claim);

// Whether a Pod controls the claim (metadata.ownerReferences): one made from a pod's
// ResourceClaimTemplate, which only that pod ever uses.
bool ownedByPod(const kube::ResourceClaim& claim);

// The one pod a claim is for, when the claim names one: the Pod that controls it, else the only
// pod in status.reservedFor. None when it names no pod or several (a shared claim: which of them
// this node prepares for is not in the claim).
struct ClaimPod {
  std::string name{};
  std::string uid{};
};
std::optional<ClaimPod> onePodOf(const kube::ResourceClaim& claim);

// Writes the record of `claim` for each of `pods`: its devices still on the node, except those
// allocated with admin access (none written when that leaves none). Error 5 when a file cannot be
// written; what was written for other pods stays (removePodDevices removes all of them).
Status writePodDevices(const std::filesystem::path& dir, const std::set<std::string>& pods,
                       const PreparedClaim& claim, const DeviceSnapshot& inv);
// Removes every record of the claim and the CNI's network reports of its devices
// (common/dra/net_report.h), and the pod dirs it leaves empty. Missing is success.
Status removePodDevices(const std::filesystem::path& dir, const std::string& claim_uid);
// Removes the records and network reports of claims not in `prepared` (a crash between the
// checkpoint and the records, or an unprepare while the daemon was down).
void sweepPodDevices(const std::filesystem::path& dir, const std::set<std::string>& prepared);

}  // namespace rdmanet::dp
