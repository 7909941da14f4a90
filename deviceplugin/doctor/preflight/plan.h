#pragma once
// Which nodes the pre-flight tests and in which pairs: pure functions over what the API
// server listed.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/doctor/preflight/options.h"

namespace rdmanet::doctor::preflight {

// Device-plugin mode: the nodes of a NodeList whose status.allocatable[resource] is a quantity
// above 0, sorted. Error 7 when the list has no items array; an item with a bad quantity is
// skipped (it has no usable devices to offer).
Result<std::vector<std::string>> nodesWithResource(const nlohmann::json& node_list,
                                                   const std::string& resource);
// DRA mode: the nodes (spec.nodeName) of a ResourceSliceList's slices of `driver` that list at
// least one device, sorted, each once.
Result<std::vector<std::string>> nodesWithSlices(const nlohmann::json& slice_list,
                                                 const std::string& driver);

struct NodePair {
  std::string from{};  // the client's node
  std::string to{};    // the server's node
  bool operator==(const NodePair&) const = default;
};

// kAll: every ordered pair, from each node in turn (A->B, A->C, B->A, ...); kRing: node i ->
// i+1 mod N; kAuto: kAll up to kAllPairsUpTo nodes, else kRing. Fewer than 2 nodes: none.
std::vector<NodePair> planPairs(const std::vector<std::string>& nodes, PairMode mode);
// The nodes that serve a pair (each once, in the nodes' order).
std::vector<std::string> serverNodes(const std::vector<std::string>& nodes,
                                     const std::vector<NodePair>& pairs);

// The MTU a NetworkAttachmentDefinition promises: the "mtu" of its spec.config (a JSON string,
// a CNI config or a conflist, then its first plugin that has one); nullopt when it names none.
// Error 7 when spec.config is missing or not JSON, or the mtu is not an integer in 68..65535.
Result<std::optional<int>> nadMtu(const nlohmann::json& nad);

}  // namespace rdmanet::doctor::preflight
