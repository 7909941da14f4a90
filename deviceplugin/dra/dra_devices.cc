#include "deviceplugin/dra/dra_devices.h"

#include <algorithm>
#include <map>

namespace rdmanet::dp {

const DraDevice* DraInventory::find(std::string_view name) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), name,
                             [](const DraDevice& d, std::string_view n) { return d.name < n; });
  return it != devices.end() && it->name == name ? &*it : nullptr;
}

const Pool* DraInventory::pool(std::string_view full_name) const {
  for (const Pool& p : pools) {
    if (p.config.fullName() == full_name) return &p;
  }
  return nullptr;
}

std::string draDeviceName(const PciAddress& pci) {
  std::string s = pci.str();
  for (char& c : s) {
    if (c == ':' || c == '.') c = '-';
  }
  return s;
}

std::vector<DraDevice> draDevices(const std::vector<Pool>& pools,
                                  std::vector<std::string>* duplicates) {
  std::map<std::string, DraDevice> out;
  for (const Pool& p : pools) {
    const bool shared = p.config.mode == PoolMode::kShared;
    for (const PoolDevice& d : p.devices) {
      DraDevice dd{.name = draDeviceName(d.pci),
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
  std::vector<DraDevice> v;
  v.reserve(out.size());
  for (auto& [name, d] : out) v.push_back(std::move(d));
  return v;
}

DeviceState::DeviceState() : inv_(std::make_shared<DraInventory>()) {}

std::shared_ptr<const DraInventory> DeviceState::current() const {
  std::lock_guard lk(mu_);
  return inv_;
}

void DeviceState::publish(DraInventory inv) {
  {
    std::lock_guard lk(mu_);
    inv.version = inv_->version + 1;
    inv_ = std::make_shared<const DraInventory>(std::move(inv));
  }
  cv_.notify_all();
}

std::shared_ptr<const DraInventory> DeviceState::waitNewer(
    uint64_t version, std::chrono::milliseconds timeout) const {
  std::unique_lock lk(mu_);
  cv_.wait_for(lk, timeout, [&] { return stopped_ || inv_->version > version; });
  if (stopped_ || inv_->version <= version) return nullptr;
  return inv_;
}

void DeviceState::stop() {
  {
    std::lock_guard lk(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

bool DeviceState::stopped() const {
  std::lock_guard lk(mu_);
  return stopped_;
}

}  // namespace rdmanet::dp
