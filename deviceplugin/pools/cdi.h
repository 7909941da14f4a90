#pragma once
// The one CDI spec encoder and writer, for both fronts: the device-plugin front's spec per pool
// (pools/artifacts.h) and the DRA front's spec per claim (dra/kubelet/cdi_spec.h).
//
// A device node is written as the CDI spec defines it and runc applies it: "path" (in the
// container), "hostPath", "type" "c", "major" and "minor", and the cgroup "permissions" ("rw").
// The runtime creates the node with the major/minor given and puts exactly that device in the
// container's device cgroup; it stats hostPath only to fill what the spec leaves out. A node whose
// numbers are unknown (0: /dev/infiniband/rdma_cm, a misc device whose minor is dynamic) leaves
// them out, and the runtime fills them from hostPath.
//
// Specs are replaced atomically (common/os/atomic_file.h: a runtime never reads half a spec),
// mode 0600 (only the runtime, as root, reads them), in a directory made 0700 when missing.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {

inline constexpr std::string_view kCdiVersion = "0.5.0";

// One CDI device: its name (unique within the kind) and the edits it makes to a container.
// `edits.cdi_devices` is not part of a spec and is ignored.
struct CdiDevice {
  std::string name{};
  ContainerAllocation edits{};
};

// {"cdiVersion", "kind", "devices": [{"name", "containerEdits": {"env", "deviceNodes",
// "mounts" (only when there are any)}}]}.
nlohmann::json encodeCdiSpec(std::string_view kind, const std::vector<CdiDevice>& devices);

struct CdiWriteOptions {
  // fsync the spec and its directory: for specs whose loss a restart would not repair by itself
  // (the DRA checkpoint names them). Pool specs are rewritten at every start, so they skip it.
  bool durable = false;
};

// Writes encodeCdiSpec(kind, devices) to `file`, making its directory (0700) when missing.
// Error 5 naming the path on failure; `file` is then left as it was.
Status writeCdiSpecFile(const std::filesystem::path& file, std::string_view kind,
                        const std::vector<CdiDevice>& devices, const CdiWriteOptions& options);

}  // namespace rdmanet::dp
