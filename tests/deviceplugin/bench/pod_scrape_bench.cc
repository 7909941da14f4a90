// rdmanet-pod-scrape-bench: the cost of one /metrics scrape's pod series (PodMetrics::render,
// podnet/pod_metrics.h) on the scaling node (tests/simnode/scale_shapes.h), for
// bench/pod_scrape.sh.
//
//   rdmanet-pod-scrape-bench VFS_PER_PF PODS [ROUNDS] [NETNS_TRIPS]
//
// The node has 8 PFs with VFS_PER_PF VFs each (16: 128 VFs; 127: 1016), mlx5-shaped (an RDMA
// device per VF with its counters/ and hw_counters/). PODS pods get one VF each (sriov, the CNI's
// state written by its own StateStore), ROUNDS scrapes are timed. Ethtool and netlink are fakes
// answering like mlx5 (about 300 statistics per PF, VF traffic counters), so the figures are
// the daemon's own work: state files, sysfs, parsing, text. NETNS_TRIPS > 0 (root only) also
// times that many real trips into throw-away namespaces (MountingNetnsSysfs: thread, unshare,
// setns, sysfs mount, a listing), the extra cost per pod in exclusive RDMA netns mode.
// Prints one JSON line.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cni/state/state_store.h"
#include "common/net/netns_sysfs.h"
#include "deviceplugin/podnet/pod_metrics.h"
#include "tests/deviceplugin/bench/latency_stats.h"
#include "tests/deviceplugin/podnet/cni_state.h"
#include "tests/fakes/fake_netlink.h"
#include "tests/simnode/scale_shapes.h"
#include "tests/simnode/temp_dir.h"

namespace {

using namespace rdmanet;
using Clock = std::chrono::steady_clock;

class Mlx5LikeEthtool final : public EthtoolStatsReader {
 public:
  Mlx5LikeEthtool() {
    for (int q = 0; q < 32; ++q) {
      for (const char* s : {"packets", "bytes", "csum_complete", "dropped", "xdp_drop"}) {
        stats_.emplace_back("rx" + std::to_string(q) + "_" + s, q);
        stats_.emplace_back("tx" + std::to_string(q) + "_" + s, q);
      }
    }
    for (int p = 0; p < 8; ++p) {
      for (const char* d : {"rx", "tx"}) {
        const std::string base = std::string(d) + "_prio" + std::to_string(p);
        stats_.emplace_back(base + "_bytes", 1);
        stats_.emplace_back(base + "_packets", 1);
        stats_.emplace_back(base + "_pause", 7);
        stats_.emplace_back(base + "_pause_duration", 1500);
        stats_.emplace_back(base + "_pause_transition", 3);
      }
    }
  }
  Result<EthtoolStats> stats(const std::string&) override { return stats_; }

 private:
  EthtoolStats stats_;
};

class TrafficNetlink final : public FakeNetlink {
 public:
  using FakeNetlink::FakeNetlink;
  Result<std::vector<VfInfo>> vfs(int pf) override {
    auto r = FakeNetlink::vfs(pf);
    if (r.ok()) {
      for (auto& v : *r) v.traffic = VfTraffic{.rx_packets = 1, .tx_packets = 2};
    }
    return r;
  }
};

nlohmann::json netnsTrips(int trips) {
  std::vector<double> us;
  MountingNetnsSysfs reader;
  for (int i = 0; i < trips; ++i) {
    const std::string name =
        "rdmanet-bench-" + std::to_string(::getpid()) + "-" + std::to_string(i);
    if (std::system(("/usr/bin/ip netns add " + name).c_str()) != 0)
      return {{"error", "ip netns add"}};
    const auto t0 = Clock::now();
    const Status st = reader.read("/run/netns/" + name, [](const Sysfs& s) {
      (void)s.list("/sys/class/net");
      (void)s.list("/sys/class/infiniband");
    });
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    (void)std::system(("/usr/bin/ip netns del " + name).c_str());
    if (!st.ok()) return {{"error", st.error().msg}};
  }
  return bench::latencyStats(us);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: rdmanet-pod-scrape-bench VFS_PER_PF PODS [ROUNDS] [NETNS_TRIPS]\n";
    return 2;
  }
  const int vfs_per_pf = std::atoi(argv[1]), pods = std::atoi(argv[2]);
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  const int trips = argc > 4 ? std::atoi(argv[4]) : 0;
  try {
    const auto tree = sim::buildScaleTree(sim::ScaleShape::kMlx5, vfs_per_pf);
    sim::TempDir state("rdmanet-podbench", "/dev/shm");
    cni::StateStore store(state.path());
    FakeKernel kernel;
    TrafficNetlink netlink(kernel);
    int made = 0;
    for (const auto& nic : tree.built.nics) {
      for (size_t pf = 0; pf < nic.pfs.size(); ++pf) {
        std::string pf_name;
        for (const auto& n : tree.built.netdevs) {
          if (n.pci == nic.pfs[pf]) pf_name = n.name;
        }
        kernel.addPf(FakeKernel::kHost, pf_name, static_cast<int>(nic.vfs[pf].size()));
        for (size_t vf = 0; vf < nic.vfs[pf].size() && made < pods; ++vf, ++made) {
          const auto st = podnet::testing::cniSriov("bench" + std::to_string(made),
                                                    "pod-" + std::to_string(made),
                                                    {.pci = nic.vfs[pf][vf].str(),
                                                     .pf = pf_name,
                                                     .pf_pci = nic.pfs[pf].str(),
                                                     .index = static_cast<int>(vf)});
          if (!store.save(st).ok()) throw std::runtime_error("cannot save state");
        }
      }
    }
    Sysfs sysfs(tree.root());
    Mlx5LikeEthtool ethtool;
    podnet::PodMetrics metrics({.state_dir = state.path()},
                               {.host = &sysfs, .ethtool = &ethtool, .netlink = &netlink});
    std::vector<double> us;
    size_t bytes = 0, lines = 0;
    for (int i = 0; i < rounds; ++i) {
      const auto t0 = Clock::now();
      const std::string text = metrics.render();
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      bytes = text.size();
      lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    }
    nlohmann::json out = {{"vfs", vfs_per_pf * 8},
                          {"pods", made},
                          {"scrape", bench::latencyStats(us)},
                          {"bytes", bytes},
                          {"lines", lines}};
    if (trips > 0) out["netns_trip"] = netnsTrips(trips);
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "rdmanet-pod-scrape-bench: " << e.what() << "\n";
    return 1;
  }
}
