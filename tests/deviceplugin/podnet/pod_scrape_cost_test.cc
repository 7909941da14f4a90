// A scrape's sysfs cost for the pod series on 128- and 1016-VF nodes (tests/simnode/
// scale_shapes.h), one pod per VF: linear in the pods, with no path read once per pod (the
// bound behind bench/pod_scrape.sh's timings, counted instead of timed).
#include <gtest/gtest.h>

#include "deviceplugin/podnet/pod_reader.h"
#include "tests/fakes/scan_cost.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet::podnet {
namespace {

using sim::ScaleShape;

// One attachment per VF of the node: sriov on the VF, or macvlan on its PF (every pod then
// shares its PF's RDMA device, found by the PF's function or, for Soft-RoCE, its netdev).
std::vector<PodAttachment> onePodPerVf(const sim::ScaleTree& tree, const std::string& mode) {
  std::vector<PodAttachment> out;
  auto netdevOf = [&](const PciAddress& pci) {
    for (const auto& n : tree.built.netdevs) {
      if (n.pci == pci) return n.name;
    }
    return std::string();
  };
  for (const auto& nic : tree.built.nics) {
    for (size_t pf = 0; pf < nic.pfs.size(); ++pf) {
      const std::string pf_name = netdevOf(nic.pfs[pf]);
      for (size_t vf = 0; vf < nic.vfs[pf].size(); ++vf) {
        PodAttachment a{.container_id = "c" + std::to_string(out.size()),
                        .ifname = "net1",
                        .pod_namespace = "bench",
                        .pod_name = "pod-" + std::to_string(out.size()),
                        .mode = mode,
                        .host_netdev = pf_name,
                        // as the CNI records it: the Soft-RoCE-on-an-upper lookup runs too
                        .pod_ifindex = static_cast<int>(100000 + out.size())};
        if (mode == "sriov") {
          a.pci = nic.vfs[pf][vf].str();
          a.host_netdev = netdevOf(nic.vfs[pf][vf]);
          a.pf_name = pf_name;
          a.pf_pci = nic.pfs[pf].str();
          a.vf_index = static_cast<int>(vf);
        }
        out.push_back(std::move(a));
      }
    }
  }
  return out;
}

void expectLinearScrape(ScaleShape shape, const std::string& mode) {
  const auto& small = sim::sharedScaleTree(shape, kSmallVfsPerPf);
  const auto& big = sim::sharedScaleTree(shape, kBigVfsPerPf);
  auto scrape = [](const std::vector<PodAttachment>& atts) {
    return [&atts](const Sysfs& s) {
      const PodSnapshot snap = readPods(resolvePodDevices(s, atts), {.host = &s});
      EXPECT_EQ(snap.devices.size(), atts.size());
    };
  };
  const auto small_atts = onePodPerVf(small, mode), big_atts = onePodPerVf(big, mode);
  expectLinear(std::string(sim::shapeName(shape)) + " " + mode + " pods scrape",
               sysfsCost(small.root(), scrape(small_atts)),
               sysfsCost(big.root(), scrape(big_atts)));
}

TEST(PodScrapeCostTest, SriovPodsOnMlx5VfsAreLinear) {
  expectLinearScrape(ScaleShape::kMlx5, "sriov");
}

TEST(PodScrapeCostTest, MacvlanPodsOnSoftRoceAreLinear) {
  expectLinearScrape(ScaleShape::kRxe, "macvlan");
}

}  // namespace
}  // namespace rdmanet::podnet
