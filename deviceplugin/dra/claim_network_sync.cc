#include "deviceplugin/dra/claim_network_sync.h"

#include <nlohmann/json.hpp>

#include "common/json/json_dump.h"
#include "deviceplugin/dra/kubelet/net_reports.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

// The reports as text: what a pass compares with the last write.
std::string fingerprint(const std::map<std::string, dra::NetReport>& reports) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [device, r] : reports) j[device] = dra::renderNetReport(r);
  return dumpJson(j);
}

}  // namespace

size_t ClaimNetworkSync::runOnce(const Deadline& deadline) {
  auto log = logger(Component::kKubelet);
  size_t writes = 0;
  std::set<std::string> live;
  for (const PreparedClaim& claim : prepared_()) {
    live.insert(claim.ref.uid);
    OwnedDevices owned{.pool = pool_};
    for (const PreparedDevice& d : claim.devices) {
      if (!d.admin_access) owned.devices.insert(d.device_name);
    }
    if (owned.devices.empty()) continue;
    ClaimNetReports reports = readClaimNetReports(dir_, claim);
    for (const std::string& why : reports.refused) {
      if (refusals_logged_.insert(why).second) log->warn("network report refused: {}", why);
    }
    std::string fp = fingerprint(reports.by_device);
    if (const auto it = written_.find(claim.ref.uid);
        it != written_.end() && it->second.reports == fp) {
      continue;
    }
    const Status st = writer_.writeNetworkStatus(claim.ref, owned, reports.by_device, deadline);
    if (!st.ok()) {
      log->warn("claim {}/{}: network status not written ({}); trying again", claim.ref.ns,
                claim.ref.name, st.error().msg);
      continue;
    }
    ++writes;
    log->info("claim {}/{}: network status of {} device(s) written", claim.ref.ns, claim.ref.name,
              reports.by_device.size());
    written_[claim.ref.uid] = {
        .ref = claim.ref, .owned = std::move(owned), .reports = std::move(fp)};
  }
  // Unprepared since the last pass: our entries go.
  for (auto it = written_.begin(); it != written_.end();) {
    if (live.contains(it->first)) {
      ++it;
      continue;
    }
    const Status st = writer_.writeNetworkStatus(it->second.ref, it->second.owned, {}, deadline);
    if (!st.ok()) {
      log->warn("claim {}/{} (unprepared): network status not removed ({}); trying again",
                it->second.ref.ns, it->second.ref.name, st.error().msg);
      ++it;
      continue;
    }
    ++writes;
    it = written_.erase(it);
  }
  // The refusals of reports since removed may be logged again if they come back.
  if (refusals_logged_.size() > 1024) refusals_logged_.clear();
  return writes;
}

}  // namespace rdmanet::dp
