#include "deviceplugin/pools/rail_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/base/enum_names.h"
#include "common/json/json_access.h"
#include "common/json/json_fields.h"
#include "common/kube/names.h"

namespace rdmanet::dp {
namespace {

constexpr EnumName<RailSource> kSources[] = {
    {"systemName", RailSource::kSystemName},
    {"chassisId", RailSource::kChassisId},
    {"portId", RailSource::kPortId},
    {"portDescription", RailSource::kPortDescription},
};

// A rule's pattern is the admin's, the field the switch's: bounded by LLDP (255 bytes), so a
// backtracking match cannot run away on length; a bad pattern is refused when the config loads.
Result<std::shared_ptr<const std::regex>> compile(const std::string& pattern,
                                                  const std::string& key) {
  try {
    return std::make_shared<const std::regex>(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return invalidAt(key, fmt::format("\"{}\" is not a regular expression: {}", pattern, e.what()));
  }
}

const std::string& field(RailSource s, const LldpNeighbor& n) {
  switch (s) {
    case RailSource::kChassisId:
      return n.chassis_id;
    case RailSource::kPortId:
      return n.port_id;
    case RailSource::kPortDescription:
      return n.port_description;
    case RailSource::kSystemName:
      break;
  }
  return n.system_name;
}

}  // namespace

Result<RailRule> parseRailRule(const nlohmann::json& j, const std::string& key) {
  if (!j.is_object()) return invalidAt(key, "must be an object {\"from\", \"match\", \"rail\"}");
  RailRule r;
  for (const auto& [k, v] : j.items()) {
    const std::string sub = fmt::format("{}.{}", key, k);
    if (k == "from") {
      RDMANET_ASSIGN_OR_RETURN(r.from, asEnum<RailSource>(v, sub, kSources, notOneOfAt));
    } else if (k == "match") {
      RDMANET_ASSIGN_OR_RETURN(r.match, asString(v, sub));
    } else if (k == "rail") {
      RDMANET_ASSIGN_OR_RETURN(r.rail, asString(v, sub));
      if (r.rail.empty()) return invalidAt(sub, "must not be empty");
    } else {
      return invalidAt(sub, "unknown key");
    }
  }
  RDMANET_ASSIGN_OR_RETURN(r.compiled, compile(r.match, key + ".match"));
  return r;
}

std::optional<std::string> railOf(const RailRule& rule, const LldpNeighbor& n) {
  const std::string& text = field(rule.from, n);
  if (text.empty()) return std::nullopt;
  std::shared_ptr<const std::regex> re = rule.compiled;
  if (!re) {
    auto c = compile(rule.match, "rails.match");
    if (!c.ok()) return std::nullopt;
    re = *c;
  }
  std::smatch m;
  if (!std::regex_match(text, m, *re)) return std::nullopt;
  std::string rail = m.format(rule.rail);
  std::ranges::transform(rail, rail.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  if (!kube::isDnsLabel(rail)) return std::nullopt;
  return rail;
}

}  // namespace rdmanet::dp
