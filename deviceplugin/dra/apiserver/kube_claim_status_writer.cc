#include "deviceplugin/dra/apiserver/kube_claim_status_writer.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

#include "common/base/clock.h"
#include "common/kube/api_error.h"
#include "deviceplugin/dra/apiserver/api_paths.h"
#include "deviceplugin/dra/apiserver/device_status.h"

namespace rdmanet::dp {

using nlohmann::json;

std::string KubeClaimStatusWriter::systemNow() {
  const auto now = std::chrono::floor<std::chrono::seconds>(wallNow());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

Status KubeClaimStatusWriter::writeNetworkStatus(
    const ClaimRef& ref, const OwnedDevices& owned,
    const std::map<std::string, dra::NetReport>& reports, const Deadline& deadline) {
  RDMANET_ASSIGN_OR_RETURN(const std::string path, dra::resourceClaimPath(ref.ns, ref.name));
  for (int attempt = 0;; ++attempt) {
    auto claim = client_.get(path, deadline);
    if (!claim.ok() && kube::isNotFound(claim.error())) return okStatus();  // gone: nothing left
    if (!claim.ok()) return claim.error();
    auto view = kube::decodeResourceClaim(*claim);
    if (!view.ok()) {
      return view.error().context(fmt::format("ResourceClaim {}/{}", ref.ns, ref.name));
    }
    if (view->metadata.uid != ref.uid) return okStatus();  // re-created
    json devices = dra::mergeDeviceStatuses(*view, driver_, owned, reports, now_());
    json& status = (*claim)["status"];
    if (!status.is_object()) status = json::object();
    const json before = status.contains("devices") ? status["devices"] : json::array();
    if (devices == before) return okStatus();
    if (devices.empty()) {
      status.erase("devices");
    } else {
      status["devices"] = std::move(devices);
    }
    auto put = client_.update(path + "/status", *claim, deadline);
    if (put.ok() || kube::isNotFound(put.error())) return okStatus();
    if (!kube::isConflict(put.error()) || attempt + 1 >= kMaxConflicts) {
      return put.error().context(fmt::format("status of ResourceClaim {}/{}", ref.ns, ref.name));
    }
  }
}

}  // namespace rdmanet::dp
