#pragma once
// The CDI spec of one prepared claim: kind "rdmanet.io/rdma", one file per claim, encoded and
// written by the one CDI encoder (pools/cdi.h: device nodes with major/minor and permissions,
// atomic, mode 0600) and durable: the checkpoint beside it names the spec, so a spec a power loss
// took would leave a checkpoint hit that points at nothing. Two kinds of CDI device, both named
// after the claim UID (CDI device names must be unique across every spec of a kind, and one device
// may be prepared for several claims when it is shareable):
// - "<claim-uid>-<device>", one per prepared DRA device: what the device plugin's Allocate gives
//   a container for that device alone (pools/allocate.h) minus the env: its uverbs/umad/issm nodes
//   plus rdma_cm, and its pod-info mount when the pool has a podInfoDir;
// - "<claim-uid>_<request>", one per claim request: only the env, built over all of the request's
//   devices (request_env.h), so PCIDEVICE_* and NCCL_IB_HCA name every NIC of the request.
// Each device kubelet gets lists its own CDI device and its request's, so every container that
// references the request gets all of them. The '_' cannot occur in a claim UID or a device name
// (DNS label), so the two kinds never collide; both match CDI's device name rule
// ^[a-zA-Z0-9][a-zA-Z0-9_.:-]*$ (a UID starts with a letter or digit).
//
// Why the env lives in a device of its own: a runtime applies the edits of a container's CDI
// devices in turn, and an env name set twice keeps the last value (CDI's ContainerEdits.Apply
// replaces a variable of the same name). Env on every per-device CDI device would leave the
// container the last device's. With it on one device per request, the request's N devices list
// the same env device N times; the runtime applies it N times with the same values (env replaced
// by name, device nodes by path), so the duplicates change nothing.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/pools/allocate.h"
#include "deviceplugin/pools/cdi.h"

namespace rdmanet::dp {

inline constexpr std::string_view kCdiKind = "rdmanet.io/rdma";

// "rdmanet.io-rdma_<uid>.json" (the CDI convention "<vendor>-<class>_<id>").
std::string claimSpecFileName(const std::string& claim_uid);
// "<claim-uid>-<device>" and "<claim-uid>_<request>" (a top-level request name, baseRequest()).
std::string deviceCdiName(const std::string& claim_uid, const std::string& device);
std::string requestCdiName(const std::string& claim_uid, std::string_view request);
// "rdmanet.io/rdma=<name>".
std::string cdiDeviceId(const std::string& name);

nlohmann::json claimCdiSpec(const std::vector<CdiDevice>& devices);
Status writeClaimCdiSpec(const std::filesystem::path& file, const std::vector<CdiDevice>& devices);
// A missing file is success (unprepare is idempotent). Error 5 when it cannot be removed.
Status removeClaimCdiSpec(const std::filesystem::path& file);
// Removes the claim specs in `cdi_dir` of claims not in `owned` (UIDs); returns how many. Never
// fails: what cannot be removed now is left for the next start.
int sweepClaimSpecs(const std::filesystem::path& cdi_dir, const std::set<std::string>& owned);

}  // namespace rdmanet::dp
