#include "deviceplugin/podnet/kubelet_check.h"

#include <map>
#include <set>
#include <utility>

namespace rdmanet::podnet {

CrossCheckResult crossCheck(std::vector<PodAttachment>& atts, const std::vector<KubeletPod>& pods) {
  CrossCheckResult res;
  std::map<std::string, const KubeletPod*> owner;  // device ID -> kubelet's pod
  for (const auto& p : pods) {
    for (const auto& id : p.device_ids) owner[id] = &p;
  }
  auto owns = [](const KubeletPod& k, const PodAttachment& a) {
    return k.pod_namespace == a.pod_namespace && k.pod_name == a.pod_name;
  };
  // Devices some attachment holds on behalf of kubelet's pod.
  std::set<std::string> held_by_owner;
  for (auto& a : atts) {
    auto it = owner.find(a.pci);
    if (a.pci.empty() || it == owner.end()) continue;
    if (a.pod_name.empty()) {
      a.pod_namespace = it->second->pod_namespace;
      a.pod_name = it->second->pod_name;
      ++res.filled;
    }
    if (owns(*it->second, a)) held_by_owner.insert(a.pci);
  }
  std::vector<PodAttachment> kept;
  kept.reserve(atts.size());
  for (auto& a : atts) {
    auto it = owner.find(a.pci);
    if (!a.pci.empty() && it != owner.end() && !owns(*it->second, a) &&
        held_by_owner.contains(a.pci)) {
      ++res.dropped;
      continue;
    }
    kept.push_back(std::move(a));
  }
  atts = std::move(kept);
  return res;
}

}  // namespace rdmanet::podnet
