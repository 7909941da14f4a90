#include "deviceplugin/dra/node_devices.h"

#include <algorithm>
#include <map>

#include "deviceplugin/dra/dra_device.h"

namespace rdmanet::dp {

const NodeDevice* DeviceSnapshot::find(std::string_view name) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), name,
                             [](const NodeDevice& d, std::string_view n) { return d.name < n; });
  return it != devices.end() && it->name == name ? &*it : nullptr;
}

const Pool* DeviceSnapshot::pool(std::string_view full_name) const {
  for (const Pool& p : pools) {
    if (p.config.fullName() == full_name) return &p;
  }
  return nullptr;
}

std::vector<NodeDevice> nodeDevices(const std::vector<Pool>& pools,
                                    std::vector<std::string>* duplicates) {
  std::map<std::string, NodeDevice> out;
  for (const Pool& p : pools) {
    const bool shared = p.config.mode == PoolMode::kShared;
    for (const PoolDevice& d : p.devices) {
      NodeDevice dd{.name = dra::pciDeviceName(d.pci),
                    .pool = p.config.fullName(),
                    .shareable = shared,
                    .device = d};
      auto [it, inserted] = out.try_emplace(dd.name, std::move(dd));
      // A shared PF's later slots are the same device: not a duplicate.
      if (!inserted && duplicates && it->second.pool != p.config.fullName() &&
          std::find(duplicates->begin(), duplicates->end(), it->first) == duplicates->end()) {
        duplicates->push_back(it->first);
      }
    }
  }
  std::vector<NodeDevice> v;
  v.reserve(out.size());
  for (auto& [name, d] : out) v.push_back(std::move(d));
  return v;
}

}  // namespace rdmanet::dp
