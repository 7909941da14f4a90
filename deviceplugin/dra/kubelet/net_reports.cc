#include "deviceplugin/dra/kubelet/net_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/os/read_file.h"

namespace rdmanet::dp {

namespace fs = std::filesystem;

ClaimNetReports readClaimNetReports(const fs::path& dir, const PreparedClaim& claim) {
  ClaimNetReports out;
  std::set<std::string> devices;
  for (const PreparedDevice& d : claim.devices) {
    if (!d.admin_access) devices.insert(d.device_name);
  }
  if (dir.empty() || devices.empty()) return out;
  std::vector<fs::path> pods;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec) && !e.is_symlink(ec)) pods.push_back(e.path());
  }
  std::sort(pods.begin(), pods.end());
  for (const fs::path& pod : pods) {
    // Our record of the claim for this pod: written by us, so the pod is one of the claim's.
    if (!fs::is_regular_file(fs::symlink_status(pod / (claim.ref.uid + ".json"), ec))) continue;
    for (const std::string& device : devices) {
      if (out.by_device.contains(device)) continue;
      const fs::path path = pod / dra::netReportName(claim.ref.uid, device);
      auto text = readFile(path, dra::kMaxReportBytes);  // refuses a symlink
      if (!text.ok()) {
        out.refused.push_back(fmt::format("{}: {}", path.string(), text.error().msg));
        continue;
      }
      if (!*text) continue;
      auto report = dra::parseNetReport(**text);
      if (!report.ok()) {
        out.refused.push_back(fmt::format("{}: {}", path.string(), report.error().msg));
        continue;
      }
      out.by_device.emplace(device, std::move(report).value());
    }
  }
  return out;
}

}  // namespace rdmanet::dp
