#pragma once
// Reading the counters of the device -> pod map, once per scrape (or per doctor sample):
//   - each device's RDMA port counters (host sysfs, or the pod's netns in exclusive mode);
//   - each pod interface's own netdev counters (bytes and packets through the kernel's stack),
//     read in the pod's netns: set against the RDMA counters, they show a pod that holds an RDMA
//     device but moves its traffic over TCP/UDP (the silent fallback, doctor/pods.h);
//   - for a VF, the PF's per-VF traffic counters (one VF-list dump per PF);
//   - per physical port, the PFC pause counters (ethtool statistics) and carrier_down_count,
//     with the pods that share the port.
// Cost: per device, one listing and one open per counter file; per pod netns, one namespace trip
// (netns_sysfs.h) and four opens; per PF, one netlink dump; per port, one ethtool query. Nothing is
// cached between reads, so a deleted pod's devices are gone from the next one.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/base/sysfs.h"
#include "common/net/ethtool_stats.h"
#include "common/net/netlink.h"
#include "common/net/netns_sysfs.h"
#include "deviceplugin/podnet/pfc_stats.h"
#include "deviceplugin/podnet/pod_devices.h"

namespace rdmanet::podnet {

// A pod interface's netdev statistics (/sys/class/net/<if>/statistics), as the pod's kernel
// counts them: what went through its network stack. Hardware RoCE (mlx5) is not in them (the
// NIC moves RDMA data without the kernel's rings, which these count); Soft-RoCE's UDP is.
struct NetdevTraffic {
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_packets = 0;
  uint64_t tx_packets = 0;
  bool operator==(const NetdevTraffic&) const = default;
};

struct DeviceReading {
  PodDevice dev{};
  std::map<int, std::map<std::string, uint64_t>> ports{};  // RDMA port -> raw counters
  std::optional<VfTraffic> vf{};
  std::optional<NetdevTraffic> netdev{};  // the pod's interface; nullopt: its netns was not read
};

struct PortReading {
  std::string netdev{};  // host name
  std::string pci{};
  std::vector<PfcCounter> pfc{};
  std::optional<uint64_t> carrier_down{};
  std::vector<std::string> pods{};  // "ns/name", sorted, unique
};

struct PodSnapshot {
  std::vector<DeviceReading> devices{};
  std::vector<PortReading> ports{};  // sorted by netdev
  int unread_netns = 0;  // pods' namespaces that could not be entered (gone, or no privilege)
};

struct PodReaderDeps {
  const Sysfs* host = nullptr;
  NetnsSysfs* netns = nullptr;            // null: what lives in pods' namespaces is not read
  EthtoolStatsReader* ethtool = nullptr;  // the host's; null: no PFC series for host ports
  // Opens a reader in the calling thread's namespace; called inside a pod's (host-device ports).
  std::function<std::unique_ptr<EthtoolStatsReader>()> open_ethtool{};
  Netlink* netlink = nullptr;  // the host's; null: no per-VF series
};

PodSnapshot readPods(const std::vector<PodDevice>& devices, const PodReaderDeps& deps);

}  // namespace rdmanet::podnet
