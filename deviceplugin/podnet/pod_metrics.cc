#include "deviceplugin/podnet/pod_metrics.h"

#include "common/base/prometheus_text.h"
#include "common/net/libnl_netlink.h"
#include "deviceplugin/podnet/pod_metrics_text.h"

namespace rdmanet::podnet {

PodSnapshot PodMetrics::snapshotLocked(MapRead& read) {
  auto atts = readPodAttachments(opts_.state_dir);
  if (kubelet_ != nullptr) {
    // Without kubelet the CNI's state stands alone: it is the primary source.
    if (auto pods = kubelet_->list(); pods.ok()) {
      read.check = crossCheck(atts, *pods);
      read.kubelet_answered = true;
    }
  }
  if (deps_.host == nullptr) return {};
  return readPods(resolvePodDevices(*deps_.host, atts), deps_);
}

PodSnapshot PodMetrics::snapshot() {
  std::lock_guard lock(mu_);
  MapRead read;
  return snapshotLocked(read);
}

std::string PodMetrics::render() {
  std::lock_guard lock(mu_);
  MapRead read;
  const PodSnapshot snap = snapshotLocked(read);
  PrometheusText out;
  out.single("rdmanet_pod_map_attachments", "gauge", "Pod attachments in the device-to-pod map.",
             snap.devices.size());
  out.single("rdmanet_pod_map_stale_attachments", "gauge",
             "CNI state files that kubelet's pod-resources contradicted (left out of the map).",
             read.check.dropped);
  if (kubelet_ != nullptr) {
    // 0 when kubelet's pod-resources socket is missing (a wrong devicePlugin.kubeletDir, say)
    // or kubelet did not answer in time: the map then goes by the CNI's state alone.
    out.single("rdmanet_pod_map_kubelet_answered", "gauge",
               "1 when the last scrape cross-checked the map with kubelet's pod-resources API.",
               read.kubelet_answered ? 1 : 0);
  }
  out.single("rdmanet_pod_netns_read_errors", "gauge",
             "Pod namespaces the last scrape could not enter (pod gone, or no CAP_SYS_ADMIN): "
             "their devices have no counters.",
             snap.unread_netns);
  renderPodMetrics(snap, out);
  return std::move(out).str();
}

PodReaderDeps PodSeams::deps() const {
  return PodReaderDeps{.host = sysfs.get(),
                       .netns = netns.get(),
                       .ethtool = ethtool.get(),
                       .open_ethtool = []() -> std::unique_ptr<EthtoolStatsReader> {
                         auto r = IoctlEthtoolStats::open();
                         return r.ok() ? std::move(r).value() : nullptr;
                       },
                       .netlink = netlink.get()};
}

PodSeams openPodSeams(const std::filesystem::path& sysfs_root,
                      const std::function<void(const std::string&)>& warn) {
  PodSeams s;
  s.sysfs = std::make_unique<Sysfs>(sysfs_root);
  s.netns = std::make_unique<MountingNetnsSysfs>(sysfs_root.string());
  if (auto e = IoctlEthtoolStats::open(); e.ok()) {
    s.ethtool = std::move(e).value();
  } else {
    warn("no ethtool statistics (no PFC series): " + e.error().msg);
  }
  if (auto nl = LibnlNetlink::open(); nl.ok()) {
    s.netlink = std::move(nl).value();
  } else {
    warn("no netlink (no per-VF series): " + nl.error().msg);
  }
  return s;
}

}  // namespace rdmanet::podnet
