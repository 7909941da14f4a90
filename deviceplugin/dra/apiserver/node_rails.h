#pragma once
// The node's rails, for schedulers that place whole jobs (a job's ranks on nodes whose NICs share
// rails): the daemon writes on its own Node
// - a label per rail, `rail.rdmanet.io/<rail>: "<ports on it>"`, which a pod's nodeAffinity or a
//   gang scheduler selects on (`rail.rdmanet.io/leaf-3 Exists`);
// - the annotation `rdmanet.io/rails`: {"<rail>": ["<PF netdev>", ...]}, which ports are on it.
// It owns every label under rail.rdmanet.io/ and that annotation: a rail no port is on any more
// loses its label. Nothing else of the Node is changed; the chart's admission policy refuses any
// other change by the daemon's token, and any Node but its own.
//
// A Node has no status subresource for labels: the write is a PUT of the whole object at the
// resourceVersion read (the client has no PATCH), re-read on 409.

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>

#include "common/base/result.h"
#include "common/kube/client.h"
#include "deviceplugin/dra/node_devices.h"

namespace rdmanet::dp {

inline constexpr std::string_view kRailLabelPrefix = "rail.rdmanet.io/";
inline constexpr std::string_view kRailsAnnotation = "rdmanet.io/rails";

// Rail -> the port netdevs (PFs) whose devices are on it.
using RailSummary = std::map<std::string, std::set<std::string>>;

RailSummary railSummary(const DeviceSnapshot& snap);

// Sets `node`'s rail labels and annotation to `rails`, removing ours that no longer hold.
// Returns whether the object changed.
bool applyRailSummary(nlohmann::json& node, const RailSummary& rails);

// Reads the Node, applies the summary and writes it back when it changed (again after a 409, at
// most `attempts` rounds). Error 104 from the API server, 7 for a bad node name.
Status writeNodeRails(kube::KubeClient& client, const std::string& node_name,
                      const RailSummary& rails, int attempts = 3);

}  // namespace rdmanet::dp
