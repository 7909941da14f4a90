#include "deviceplugin/doctor/host_seams.h"

#include <chrono>

#include "common/base/clock.h"
#include "common/net/libnl_netlink.h"
#include "common/rdma/ibv_verbs.h"
#include "deviceplugin/podnet/pod_metrics.h"

namespace rdmanet::doctor {

HostSeams openHostSeams(std::ostream* err) {
  HostSeams s;
  if (auto nl = LibnlNetlink::open(); nl.ok()) {
    s.netlink = std::move(nl).value();
  } else if (err) {
    *err << "rdmanet-doctor: no netlink socket (" << nl.error().msg
         << "): DCB checks will be UNKNOWN\n";
  }
  if (auto p = EthtoolPauseReader::open(); p.ok()) {
    s.pause = std::move(p).value();
  } else if (err) {
    *err << "rdmanet-doctor: no ethtool netlink (" << p.error().msg
         << "): pause checks will be UNKNOWN\n";
  }
  // Opening nothing yet: a node without RDMA devices costs nothing, and each device that does
  // not open falls back to sysfs with the reason in its evidence.
  s.verbs = std::make_unique<IbvRdmaVerbs>();
  return s;
}

PodsCliDeps hostPodsCliDeps(std::ostream* err) {
  return PodsCliDeps{
      .read =
          [err](const std::string& state_dir, const std::string& sysfs_root) {
            const auto seams = podnet::openPodSeams(sysfs_root, [err](const std::string& note) {
              if (err) *err << "rdmanet-doctor pods: " << note << "\n";
            });
            return podnet::PodMetrics({.state_dir = state_dir}, seams.deps()).snapshot();
          },
      .wait = [](int s) { SteadyClock().sleepFor(std::chrono::seconds(s)); }};
}

}  // namespace rdmanet::doctor
