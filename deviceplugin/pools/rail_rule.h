#pragma once
// Rails: which leaf switch a NIC port hangs off, named from the port's LLDP neighbour by a rule
// the admin configures. In a rail-optimised fabric NIC k of every node goes to leaf k; NCCL's
// ranks should stay on one rail, so a claim selects `rdmanet.io/rail` and a job scheduler reads
// the node's rails.
//
// Config (the top-level `rails` object of the device plugin's config):
//   {"from": "systemName" | "chassisId" | "portId" | "portDescription",   default systemName
//    "match": "<ECMAScript regex over the whole field>",                   default "(.+)"
//    "rail": "<the rail's name, $1..$9 the match's groups>"}               default "$1"
// e.g. leaves named "leaf-3.pod1" and rails named by their number:
//   {"match": "leaf-([0-9]+)\\..*", "rail": "rail-$1"}.
// A field that does not match gives no rail; the result is lowercased and must be a DNS label
// (it becomes a node label's name and an attribute value), else there is no rail either.

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <regex>
#include <string>

#include "common/base/result.h"
#include "common/net/lldp_frame.h"

namespace rdmanet::dp {

enum class RailSource { kSystemName, kChassisId, kPortId, kPortDescription };

struct RailRule {
  RailSource from = RailSource::kSystemName;
  std::string match = "(.+)";
  std::string rail = "$1";
  std::shared_ptr<const std::regex> compiled{};  // of `match`; null: compiled on first use
  bool operator==(const RailRule& o) const {
    return from == o.from && match == o.match && rail == o.rail;
  }
};

// Parses the `rails` object (`key` names it in messages). Error 7 naming the key for an unknown
// key, an unknown `from`, a `match` that does not compile or a `rail` without text.
Result<RailRule> parseRailRule(const nlohmann::json& j, const std::string& key);

// The rail `n` is on under `rule`, nullopt when the field is empty or does not match, or the
// name made is not a DNS label.
std::optional<std::string> railOf(const RailRule& rule, const LldpNeighbor& n);

}  // namespace rdmanet::dp
