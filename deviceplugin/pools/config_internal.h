#pragma once
// Pieces of config parsing shared by config.cc and config_selectors.cc. Not a public API.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/pools/config.h"

namespace rdmanet::dp {

// `selectors`: one object or an ordered list of objects. `key` is its path for messages.
Result<std::vector<Selector>> parseSelectors(const nlohmann::json& j, const std::string& key,
                                             bool from_config_list);
// Cross-pool checks: duplicate resource names, and explicit selectors (pciAddresses, pfNames,
// rootDevices, ifNames) of two pools of the same mode naming the same device.
Status checkPools(const std::vector<PoolConfig>& pools);

}  // namespace rdmanet::dp
