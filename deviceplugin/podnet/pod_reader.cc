#include "deviceplugin/podnet/pod_reader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "common/inventory/rdma_counters.h"

namespace rdmanet::podnet {
namespace {

void readRdma(const Sysfs& sysfs, DeviceReading& r) {
  for (int port : rdmaPorts(sysfs, r.dev.rdma_device)) {
    if (auto c = readPortCounters(sysfs, r.dev.rdma_device, port)) r.ports[port] = std::move(*c);
  }
}

// The host's RDMA devices, each read once per scrape however many pods share it (macvlan pods
// share their master's).
class HostRdma {
 public:
  explicit HostRdma(const Sysfs& sysfs) : sysfs_(sysfs) {}
  void read(DeviceReading& r) {
    auto it = read_.find(r.dev.rdma_device);
    if (it != read_.end()) {
      r.ports = it->second;
      return;
    }
    readRdma(sysfs_, r);
    read_.emplace(r.dev.rdma_device, r.ports);
  }

 private:
  const Sysfs& sysfs_;
  std::map<std::string, std::map<int, std::map<std::string, uint64_t>>> read_;
};

void readPort(const Sysfs& sysfs, EthtoolStatsReader* ethtool, const std::string& ifname,
              PortReading& p) {
  if (auto n = sysfs.readInt("/sys/class/net/" + ifname + "/carrier_down_count"); n && *n >= 0) {
    p.carrier_down = static_cast<uint64_t>(*n);
  }
  if (ethtool == nullptr) return;
  // A port without statistics (veth, igb's VFs) simply has no PFC series.
  if (auto stats = ethtool->stats(ifname); stats.ok()) p.pfc = pfcCounters(*stats);
}

// The pod interface's netdev statistics, read in the pod's netns. Why there, and these: the
// interface has left the host's namespace, so the host's sysfs does not list it; the VF's
// counters its PF reports (IFLA_VF_STATS) exist for sriov only, on drivers that implement them
// (mlx5, ice; not igb), and count the VF's RDMA traffic too. The pod's own statistics exist for
// every mode and driver, cost four small reads in the namespace trip exclusive-RDMA and
// host-device pods make anyway (one more trip for the others: 0.35-0.6 ms a pod measured on a
// loaded machine, README), and count exactly what went through the pod's kernel stack: the
// TCP/UDP that should have been RDMA. The trip needs CAP_SYS_ADMIN; without it these series are
// missing and the VF's counters stand in.
std::optional<NetdevTraffic> readNetdev(const Sysfs& pod, const std::string& ifname) {
  if (ifname.empty() || ifname == "." || ifname == ".." || ifname.find('/') != std::string::npos) {
    return std::nullopt;
  }
  const std::string dir = "/sys/class/net/" + ifname + "/statistics/";
  NetdevTraffic t;
  for (auto [name, field] : {std::pair{"rx_bytes", &NetdevTraffic::rx_bytes},
                             {"tx_bytes", &NetdevTraffic::tx_bytes},
                             {"rx_packets", &NetdevTraffic::rx_packets},
                             {"tx_packets", &NetdevTraffic::tx_packets}}) {
    const auto v = pod.readInt(dir + name);
    if (!v || *v < 0) return std::nullopt;
    t.*field = static_cast<uint64_t>(*v);
  }
  return t;
}

// The PF's VF list, one dump per PF per read.
class VfLists {
 public:
  explicit VfLists(Netlink* nl) : nl_(nl) {}
  std::optional<VfTraffic> traffic(const std::string& pf, int vf) {
    if (nl_ == nullptr || pf.empty() || vf < 0) return std::nullopt;
    auto [it, fresh] = lists_.try_emplace(pf);
    if (fresh) {
      if (auto link = nl_->linkByName(pf); link.ok()) {
        if (auto vfs = nl_->vfs(link->ifindex); vfs.ok()) it->second = std::move(*vfs);
      }
    }
    for (const auto& v : it->second) {
      if (v.index == vf) return v.traffic;
    }
    return std::nullopt;
  }

 private:
  Netlink* nl_;
  std::map<std::string, std::vector<VfInfo>> lists_;
};

}  // namespace

PodSnapshot readPods(const std::vector<PodDevice>& devices, const PodReaderDeps& deps) {
  PodSnapshot snap;
  snap.devices.reserve(devices.size());
  std::map<std::string, PortReading> ports;
  // Every pod's namespace, for its interface's counters (and, where they live there, its RDMA
  // device and port): one trip per netns. `needs_netns`: the netns whose RDMA device or port
  // is only visible from inside.
  std::map<std::string, std::vector<size_t>> in_netns;
  std::set<std::string> needs_netns;
  VfLists vf_lists(deps.netlink);
  std::optional<HostRdma> host_rdma;
  if (deps.host) host_rdma.emplace(*deps.host);
  for (const auto& d : devices) {
    DeviceReading& r = snap.devices.emplace_back(DeviceReading{.dev = d});
    const size_t idx = snap.devices.size() - 1;
    if (!d.rdma_device.empty() && !d.rdma_in_pod_netns && host_rdma) host_rdma->read(r);
    const bool needs = d.rdma_in_pod_netns || !d.port_ifname_in_pod.empty();
    if (needs) needs_netns.insert(d.att.netns);
    if (needs || !d.att.netns.empty()) in_netns[d.att.netns].push_back(idx);
    if (d.att.mode == "sriov") r.vf = vf_lists.traffic(d.att.pf_name, d.att.vf_index);
    if (d.port_netdev.empty()) continue;
    PortReading& p = ports[d.port_netdev];
    p.netdev = d.port_netdev;
    p.pci = d.port_pci;
    p.pods.push_back(d.att.podRef());
  }
  // Host ports only here; a host-device port is read in its pod's netns below.
  std::set<std::string> pod_side;
  for (const auto& d : devices) {
    if (!d.port_ifname_in_pod.empty()) pod_side.insert(d.port_netdev);
  }
  for (auto& [netdev, p] : ports) {
    if (!pod_side.contains(netdev) && deps.host) readPort(*deps.host, deps.ethtool, netdev, p);
  }
  for (const auto& entry : in_netns) {
    // Named, not a structured binding: the lambda below captures it (clang 14 refuses those).
    const std::string& netns = entry.first;
    const std::vector<size_t>& idxs = entry.second;
    if (netns.empty() || deps.netns == nullptr) {
      // Only a pod whose devices are in there counts as unread (below).
      if (needs_netns.contains(netns)) ++snap.unread_netns;
      continue;
    }
    // A pod that is going away (its netns gone) is skipped; its state file goes with its DEL.
    const Status st = deps.netns->read(netns, [&](const Sysfs& pod) {
      std::unique_ptr<EthtoolStatsReader> ethtool;
      for (size_t i : idxs) {
        DeviceReading& r = snap.devices[i];
        r.netdev = readNetdev(pod, r.dev.att.ifname);
        if (r.dev.rdma_in_pod_netns) readRdma(pod, r);
        if (r.dev.port_ifname_in_pod.empty()) continue;
        if (!ethtool && deps.open_ethtool) ethtool = deps.open_ethtool();
        readPort(pod, ethtool.get(), r.dev.port_ifname_in_pod, ports[r.dev.port_netdev]);
      }
    });
    // Only where devices live in there: a pod's interface counters need CAP_SYS_ADMIN, which
    // the chart's daemon has only with devicePlugin.podNetns.enabled, and their absence is no
    // error (the VF's stand in).
    if (!st.ok() && needs_netns.contains(netns)) ++snap.unread_netns;
  }
  for (auto& [netdev, p] : ports) {
    std::sort(p.pods.begin(), p.pods.end());
    p.pods.erase(std::unique(p.pods.begin(), p.pods.end()), p.pods.end());
    snap.ports.push_back(std::move(p));
  }
  return snap;
}

}  // namespace rdmanet::podnet
