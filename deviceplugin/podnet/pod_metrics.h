#pragma once
// PodMetrics: the device -> pod map and its counters, read on each /metrics scrape.
//
// Each render() reads the CNI's state directory afresh (pod_attachments.h), cross-checks it with
// kubelet where a source is given (kubelet_check.h), resolves the devices (pod_devices.h), reads
// their counters (pod_reader.h) and writes the series (pod_metrics_text.h). Nothing survives
// between scrapes, so a deleted pod has no series on the next one and a restarted daemon
// shows the same map. Scrapes are serialised: concurrent scrapers wait rather than multiply
// the cost. Runs on the HTTP server's thread, never on the daemon's loop.
//
// Besides the series of pod_metrics_text.h:
//   rdmanet_pod_map_attachments                 gauge: attachments in the map
//   rdmanet_pod_map_stale_attachments           gauge: state files kubelet's pod-resources
//                                               contradicted at the last scrape (dropped)
//   rdmanet_pod_netns_read_errors               gauge: pods' namespaces the last scrape could
//                                               not enter (their devices have no counters)

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "deviceplugin/podnet/kubelet_check.h"
#include "deviceplugin/podnet/pod_reader.h"

namespace rdmanet::podnet {

// Kubelet's pod -> devices view (the pod-resources API's List).
class KubeletPodSource {
 public:
  virtual ~KubeletPodSource() = default;
  // Error 100-up when kubelet cannot be asked (the map then goes by the CNI's state alone).
  virtual Result<std::vector<KubeletPod>> list() = 0;
};

struct PodMetricsOptions {
  std::filesystem::path state_dir = "/var/lib/cni/rdmanet";
};

class PodMetrics {
 public:
  // `deps`' pointers and `kubelet` (may be null) must outlive this object.
  PodMetrics(PodMetricsOptions opts, PodReaderDeps deps, KubeletPodSource* kubelet = nullptr)
      : opts_(std::move(opts)), deps_(std::move(deps)), kubelet_(kubelet) {}

  // One full read. Thread-safe (serialised).
  PodSnapshot snapshot();
  // snapshot() as Prometheus text, with the map's own gauges.
  std::string render();

 private:
  // How the map's read went, for its gauges.
  struct MapRead {
    CrossCheckResult check{};
    bool kubelet_answered = false;
  };
  PodSnapshot snapshotLocked(MapRead& read);

  PodMetricsOptions opts_;
  PodReaderDeps deps_;
  KubeletPodSource* kubelet_;
  std::mutex mu_;
};

// The real seams for a PodMetrics in the host's namespaces: the host's sysfs, the mounting
// netns reader, an ethtool socket and a netlink socket. A seam that cannot be opened is left
// null (its series are then missing), and a note goes to `warn`.
struct PodSeams {
  std::unique_ptr<Sysfs> sysfs;
  std::unique_ptr<NetnsSysfs> netns;
  std::unique_ptr<EthtoolStatsReader> ethtool;
  std::unique_ptr<Netlink> netlink;
  PodReaderDeps deps() const;
};
PodSeams openPodSeams(const std::filesystem::path& sysfs_root,
                      const std::function<void(const std::string&)>& warn);

}  // namespace rdmanet::podnet
