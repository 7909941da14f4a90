#include "tests/fakes/fake_rdma_verbs.h"

#include <cerrno>

namespace rdmanet {

void FakeRdmaVerbs::set(DeviceFacts facts) {
  facts.source = FactSource::kVerbs;
  facts.fallback_reason.clear();
  open_errors_.erase(facts.name);
  std::string name = facts.name;
  devices_[name] = std::move(facts);
}

void FakeRdmaVerbs::failOpen(const std::string& device, int err) { open_errors_[device] = err; }

void FakeRdmaVerbs::remove(const std::string& device) {
  devices_.erase(device);
  open_errors_.erase(device);
}

Result<std::vector<std::string>> FakeRdmaVerbs::devices() {
  std::vector<std::string> names;
  for (const auto& [n, f] : devices_) names.push_back(n);
  return names;
}

Result<DeviceFacts> FakeRdmaVerbs::query(const std::string& device) {
  ++queries_;
  if (auto e = open_errors_.find(device); e != open_errors_.end()) {
    return errnoError(ErrorCode::kRdmaFailure, e->second, "verbs: ibv_open_device(" + device + ")");
  }
  auto it = devices_.find(device);
  if (it == devices_.end()) {
    return makeError(ErrorCode::kDeviceNotFound,
                     "verbs: no device " + device + " (not listed by libibverbs)");
  }
  return it->second;
}

Result<PauseState> FakePauseReader::pause(const std::string& ifname) {
  if (auto e = errors_.find(ifname); e != errors_.end()) {
    return errnoError(e->second == ENODEV ? ErrorCode::kDeviceNotFound : ErrorCode::kNetlinkFailure,
                      e->second, "ethtool PAUSE_GET " + ifname);
  }
  auto it = ports_.find(ifname);
  if (it == ports_.end()) {
    return errnoError(ErrorCode::kDeviceNotFound, ENODEV, "ethtool PAUSE_GET " + ifname);
  }
  return it->second;
}

}  // namespace rdmanet
