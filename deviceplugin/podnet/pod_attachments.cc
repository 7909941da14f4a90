#include "deviceplugin/podnet/pod_attachments.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/json/json_access.h"
#include "common/os/read_file.h"

namespace rdmanet::podnet {
namespace {

using json = nlohmann::json;

// The CNI refuses to write a state file above 1 MiB (cni/conf/limits.h); anything bigger is not
// its.
constexpr size_t kMaxStateBytes = 1 << 20;

std::optional<PodAttachment> fromJson(const json& j) {
  if (!j.is_object() || !j.value("complete", false)) return std::nullopt;
  PodAttachment a;
  a.container_id = j.value("containerID", "");
  a.ifname = j.value("ifname", "");
  a.mode = j.value("mode", "");
  if (a.container_id.empty() || a.ifname.empty() || a.mode.empty()) return std::nullopt;
  a.netns = j.value("netns", "");
  a.pod_namespace = j.value("podNamespace", "");
  a.pod_name = j.value("podName", "");
  a.pod_uid = j.value("podUid", "");
  a.pci = j.value("pci", "");
  a.host_netdev = j.value("hostIfname", "");
  a.pod_lower = j.value("podLower", "");
  a.pf_name = j.value("pfName", "");
  a.pf_pci = j.value("pfPci", "");
  a.vf_index = intOr(j, "vfIndex", -1, -1, INT32_MAX).valueOr(-1);
  a.rdma_in_pod = j.value("rdmaMoved", std::vector<std::string>{});
  // The CNI wrote these within their ranges; a number outside them is not its, and reads as
  // "not recorded" rather than as a wrapped value.
  a.priority = intOr(j, "priority", 0, 0, 7).valueOr(0);
  a.pod_ifindex = intOr(j, "podIfindex", 0, 0, INT32_MAX).valueOr(0);
  return a;
}

}  // namespace

std::vector<PodAttachment> readPodAttachments(const std::filesystem::path& state_dir) {
  std::vector<PodAttachment> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(state_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto& p = it->path();
    // Only <cid>_<ifname>.json at the top: temp files and the vlan/ipam documents are not
    // attachments.
    if (p.extension() != ".json" || !it->is_regular_file(ec)) continue;
    // A file DEL removes while we read is simply not there: no entry.
    auto text = readFile(p, kMaxStateBytes);
    if (!text.ok() || !*text) continue;
    const json j = json::parse(**text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;
    try {
      if (auto a = fromJson(j)) out.push_back(std::move(*a));
    } catch (const json::exception&) {
      continue;  // a key of the wrong type: not a state file of ours
    }
  }
  std::sort(out.begin(), out.end(), [](const PodAttachment& a, const PodAttachment& b) {
    return std::tie(a.pod_namespace, a.pod_name, a.ifname, a.container_id) <
           std::tie(b.pod_namespace, b.pod_name, b.ifname, b.container_id);
  });
  return out;
}

}  // namespace rdmanet::podnet
