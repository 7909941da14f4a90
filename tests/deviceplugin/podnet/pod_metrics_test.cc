// The pod series end to end: CNI state files (written by the CNI's StateStore), the simulated
// node's sysfs, fake ethtool, netlink and pod namespaces -> PodMetrics::render().
#include "deviceplugin/podnet/pod_metrics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "cni/state/state_store.h"
#include "tests/deviceplugin/podnet/cni_state.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_netlink.h"
#include "tests/fakes/fake_netns_sysfs.h"
#include "tests/simnode/sim_tree.h"

namespace rdmanet::podnet {
namespace {

namespace fs = std::filesystem;
using dp::testing::TestNode;

class FakeEthtool final : public EthtoolStatsReader {
 public:
  std::map<std::string, EthtoolStats> ports;
  Result<EthtoolStats> stats(const std::string& ifname) override {
    auto it = ports.find(ifname);
    if (it == ports.end()) return errnoError(ErrorCode::kNetlinkFailure, EOPNOTSUPP, ifname);
    return it->second;
  }
};

// The fake kernel's VF list with the PF's per-VF counters added, as mlx5 reports them.
class TrafficNetlink final : public FakeNetlink {
 public:
  using FakeNetlink::FakeNetlink;
  std::map<int, VfTraffic> traffic;
  int dumps = 0;
  Result<std::vector<VfInfo>> vfs(int pf) override {
    ++dumps;
    auto r = FakeNetlink::vfs(pf);
    if (!r.ok()) return r;
    for (auto& v : *r) {
      if (auto it = traffic.find(v.index); it != traffic.end()) v.traffic = it->second;
    }
    return r;
  }
};

class PodMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_.addPf(FakeKernel::kHost, node_.pfNetdev(0), 4);
    ethtool_.ports[node_.pfNetdev(0)] = {{"rx_prio3_pause", 7},
                                         {"rx_prio3_pause_duration", 1500000},
                                         {"tx_prio3_pause", 0},
                                         {"tx_prio3_pause_duration", 0}};
  }
  void TearDown() override {
    fs::remove_all(state_);
    fs::remove_all(pod_root_);
  }

  const sim::BuiltNetdev& netdevOf(const PciAddress& pci) {
    for (const auto& n : node_.built().netdevs) {
      if (n.pci == pci) return n;
    }
    throw std::out_of_range("netdev");
  }

  // A complete sriov attachment of VF `vf` of PF 0 for pod ml/<pod>.
  cni::AttachmentState sriov(const std::string& cid, const std::string& pod, int vf) {
    return testing::cniSriov(cid, pod,
                             {.pci = node_.vf(0, vf).str(),
                              .netdev = netdevOf(node_.vf(0, vf)).name,
                              .pf = node_.pfNetdev(0),
                              .pf_pci = node_.pf(0).str(),
                              .index = vf});
  }

  void save(const cni::AttachmentState& st) { ASSERT_TRUE(store_.save(st).ok()); }

  std::string rdmaOfVf(int vf) { return netdevOf(node_.vf(0, vf)).rdma; }
  void setCounter(const std::string& rdma, const std::string& sub, const std::string& name,
                  int value) {
    node_.tree().writeAttr("/sys/class/infiniband/" + rdma + "/ports/1/" + sub + "/" + name,
                           std::to_string(value));
  }

  PodReaderDeps deps() {
    return PodReaderDeps{.host = &sysfs_,
                         .netns = &netns_,
                         .ethtool = &ethtool_,
                         .open_ethtool = [this]() -> std::unique_ptr<EthtoolStatsReader> {
                           ++pod_ethtool_opens_;
                           auto e = std::make_unique<FakeEthtool>();
                           e->ports = pod_ethtool_;
                           return e;
                         },
                         .netlink = &netlink_};
  }
  std::string render() { return PodMetrics({.state_dir = state_}, deps()).render(); }

  TestNode node_;
  Sysfs sysfs_{node_.root()};
  fs::path state_ = dp::testing::makeTempDir("podstate");
  fs::path pod_root_ = dp::testing::makeTempDir("podns");
  sim::SimTree pod_tree_{pod_root_};  // what a pod's own sysfs mount shows
  cni::StateStore store_{state_};
  FakeKernel kernel_;
  TrafficNetlink netlink_{kernel_};
  FakeEthtool ethtool_;
  std::map<std::string, EthtoolStats> pod_ethtool_;
  int pod_ethtool_opens_ = 0;
  FakeNetnsSysfs netns_;
};

::testing::AssertionResult hasLine(const std::string& text, const std::string& line) {
  if (text.find("\n" + line + "\n") != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "missing line:\n" << line << "\nin:\n" << text;
}

TEST_F(PodMetricsTest, AnSriovPodsRdmaCountersCarryItsLabelsAndCommonNames) {
  save(sriov("c0", "trainer-0", 1));
  const std::string rdma = rdmaOfVf(1), pci = node_.vf(0, 1).str();
  setCounter(rdma, "hw_counters", "out_of_sequence", 42);
  setCounter(rdma, "counters", "port_xmit_data", 10);
  const std::string text = render();
  const std::string labels = "namespace=\"ml\",pod=\"trainer-0\",interface=\"net1\",device=\"" +
                             pci + "\",rdma_device=\"" + rdma + "\",mode=\"sriov\",port=\"1\"";
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_rdma_out_of_sequence_total{" + labels +
                                ",counter=\"out_of_sequence\"} 42"));
  // IB PMA data counters are 4-byte words.
  EXPECT_TRUE(hasLine(
      text, "rdmanet_pod_rdma_tx_bytes_total{" + labels + ",counter=\"port_xmit_data\"} 40"));
  EXPECT_TRUE(hasLine(
      text, "rdmanet_pod_rdma_driver_counter_total{" + labels + ",counter=\"symbol_error\"} 0"));
  EXPECT_TRUE(hasLine(text,
                      "rdmanet_pod_device_info{namespace=\"ml\",pod=\"trainer-0\",uid=\"uid-"
                      "trainer-0\",interface=\"net1\",device=\"" +
                          pci + "\",rdma_device=\"" + rdma + "\",mode=\"sriov\",netdev=\"" +
                          netdevOf(node_.vf(0, 1)).name + "\",priority=\"3\"} 1"));
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_map_attachments 1"));
}

TEST_F(PodMetricsTest, ASoftRoceDeviceOnAnUpperOfThePodsVfCarriesThePodsLabels) {
  // The VM's arrangement (hack/vm/roce_pods.sh): an ipvlan slave of the pod's VF, moved to the
  // host's netns, carries an rxe; its iflink is the VF's ifindex in the pod, which ADD recorded.
  auto st = sriov("c0", "trainer-0", 1);
  st.pod_ifindex = 4242;
  save(st);
  node_.tree().addVirtualNetdev({.name = "rsla", .ifindex = 4300, .iflink = 4242});
  node_.tree().addSoftRdma({.name = "rxsa"}, "rsla");
  setCounter("rxsa", "hw_counters", "completer_retry_err", 5);
  const std::string text = render();
  EXPECT_TRUE(hasLine(text,
                      "rdmanet_pod_rdma_retransmits_total{namespace=\"ml\",pod=\"trainer-0\","
                      "interface=\"net1\",device=\"" +
                          node_.vf(0, 1).str() +
                          "\",rdma_device=\"rxsa\",mode=\"sriov\",port=\"1\","
                          "counter=\"completer_retry_err\"} 5"));
}

TEST_F(PodMetricsTest, AVfsTrafficComesFromItsPfOneDumpPerPf) {
  save(sriov("c0", "trainer-0", 1));
  save(sriov("c1", "trainer-1", 2));
  netlink_.traffic[1] = {.rx_packets = 3,
                         .tx_packets = 4,
                         .rx_bytes = 1000,
                         .tx_bytes = 2000,
                         .rx_dropped = 5,
                         .tx_dropped = 6};
  const std::string text = render();
  const std::string labels = "namespace=\"ml\",pod=\"trainer-0\",interface=\"net1\",device=\"" +
                             node_.vf(0, 1).str() + "\",rdma_device=\"" + rdmaOfVf(1) +
                             "\",mode=\"sriov\"";
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_vf_rx_bytes_total{" + labels + "} 1000"));
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_vf_tx_dropped_total{" + labels + "} 6"));
  EXPECT_EQ(text.find("rdmanet_pod_vf_rx_bytes_total{namespace=\"ml\",pod=\"trainer-1\""),
            std::string::npos);  // the PF reports nothing for VF 2
  EXPECT_EQ(netlink_.dumps, 1);
}

TEST_F(PodMetricsTest, APortsPfcAndLinkDownSeriesListThePodsSharingIt) {
  save(sriov("c1", "trainer-1", 2));
  save(sriov("c0", "trainer-0", 1));
  node_.tree().writeAttr("/sys/class/net/" + node_.pfNetdev(0) + "/carrier_down_count", "2");
  const std::string text = render();
  const std::string port = "netdev=\"" + node_.pfNetdev(0) + "\",device=\"" + node_.pf(0).str() +
                           "\",priority=\"3\",direction=\"rx\",pods=\"ml/trainer-0,ml/trainer-1\"";
  EXPECT_TRUE(hasLine(text, "rdmanet_port_pfc_pause_frames_total{" + port + "} 7"));
  EXPECT_TRUE(hasLine(text, "rdmanet_port_pfc_pause_duration_seconds_total{" + port + "} 1.5"));
  EXPECT_TRUE(hasLine(text, "rdmanet_port_link_down_events_total{netdev=\"" + node_.pfNetdev(0) +
                                "\",device=\"" + node_.pf(0).str() + "\"} 2"));
}

TEST_F(PodMetricsTest, AnExclusiveModeDeviceIsReadInsideThePodsNetns) {
  auto st = sriov("c2", "trainer-2", 3);
  const std::string rdma = rdmaOfVf(3);
  st.rdma_moved = {rdma};
  save(st);
  // The host's tree still has the device (the simulated node), with other values: the pod's
  // own view is the one read.
  setCounter(rdma, "hw_counters", "out_of_sequence", 1);
  pod_tree_.writeAttr("/sys/class/infiniband/" + rdma + "/ports/1/hw_counters/out_of_sequence",
                      "77");
  netns_.add(st.netns, pod_root_.string());
  const std::string text = render();
  EXPECT_EQ(netns_.reads(), 1);
  EXPECT_NE(text.find("pod=\"trainer-2\",interface=\"net1\",device=\"" + node_.vf(0, 3).str() +
                      "\",rdma_device=\"" + rdma +
                      "\",mode=\"sriov\",port=\"1\",counter=\"out_of_sequence\"} 77\n"),
            std::string::npos)
      << text;
}

TEST_F(PodMetricsTest, APodsInterfaceCountersAreReadInItsNetnsUnderItsLabels) {
  auto st = sriov("c1", "trainer-1", 2);
  save(st);
  for (const auto& [f, v] : {std::pair{"rx_bytes", "1000"},
                             {"tx_bytes", "2100000000"},
                             {"rx_packets", "10"},
                             {"tx_packets", "1400000"}}) {
    pod_tree_.writeAttr("/sys/class/net/net1/statistics/" + std::string(f), v);
  }
  netns_.add(st.netns, pod_root_.string());
  const std::string text = render();
  EXPECT_EQ(netns_.reads(), 1);
  const std::string labels = "namespace=\"ml\",pod=\"trainer-1\",interface=\"net1\",device=\"" +
                             node_.vf(0, 2).str() + "\",rdma_device=\"" + rdmaOfVf(2) +
                             "\",mode=\"sriov\"";
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_netdev_tx_bytes_total{" + labels + "} 2100000000"));
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_netdev_rx_bytes_total{" + labels + "} 1000"));
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_netdev_tx_packets_total{" + labels + "} 1400000"));
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_netns_read_errors 0"));
}

TEST_F(PodMetricsTest, APodWhoseNetnsIsGoneKeepsItsInfoButNoCounters) {
  auto st = sriov("c2", "trainer-2", 3);
  st.rdma_moved = {rdmaOfVf(3)};
  save(st);
  const std::string text = render();  // no namespace registered for c2
  EXPECT_NE(text.find("rdmanet_pod_device_info{namespace=\"ml\",pod=\"trainer-2\""),
            std::string::npos);
  EXPECT_EQ(text.find("rdmanet_pod_rdma_out_of_sequence_total{namespace=\"ml\",pod=\"trainer-2\""),
            std::string::npos);
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_netns_read_errors 1"));
}

TEST_F(PodMetricsTest, MacvlanPodsShareTheirMastersRdmaDeviceAndPort) {
  auto st = testing::cniAttachment("m0", "web", "infer-0", cni::Mode::kMacvlan);
  st.pod_uid.clear();
  st.host_ifname = node_.pfNetdev(1);
  save(st);
  const std::string text = render();
  const std::string pf_rdma = netdevOf(node_.pf(1)).rdma;
  EXPECT_NE(text.find("rdmanet_pod_device_info{namespace=\"web\",pod=\"infer-0\",uid=\"\","
                      "interface=\"net1\",device=\"\",rdma_device=\"" +
                      pf_rdma + "\",mode=\"macvlan\",netdev=\"" + node_.pfNetdev(1) +
                      "\",priority=\"0\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rdmanet_pod_rdma_out_of_sequence_total{namespace=\"web\",pod=\"infer-0\""),
            std::string::npos);
}

TEST_F(PodMetricsTest, AHostDevicePortIsReadInsideThePodUnderItsHostName) {
  auto st = testing::cniAttachment("h0", "ml", "solo", cni::Mode::kHostDevice);
  st.pci = node_.pf(1).str();
  st.host_ifname = node_.pfNetdev(1);
  st.priority = 5;
  save(st);
  pod_tree_.writeAttr("/sys/class/net/net1/carrier_down_count", "4");
  pod_ethtool_["net1"] = {{"tx_prio5_pause", 12}};
  netns_.add(st.netns, pod_root_.string());
  const std::string text = render();
  EXPECT_EQ(pod_ethtool_opens_, 1);  // opened inside the pod's namespace, not the host's
  EXPECT_TRUE(hasLine(text, "rdmanet_port_pfc_pause_frames_total{netdev=\"" + node_.pfNetdev(1) +
                                "\",device=\"" + node_.pf(1).str() +
                                "\",priority=\"5\",direction=\"tx\",pods=\"ml/solo\"} 12"));
  EXPECT_TRUE(hasLine(text, "rdmanet_port_link_down_events_total{netdev=\"" + node_.pfNetdev(1) +
                                "\",device=\"" + node_.pf(1).str() + "\"} 4"));
}

TEST_F(PodMetricsTest, ADeletedPodHasNoSeriesOnTheNextScrape) {
  save(sriov("c0", "trainer-0", 1));
  save(sriov("c1", "trainer-1", 2));
  PodMetrics metrics({.state_dir = state_}, deps());
  ASSERT_NE(metrics.render().find("trainer-0"), std::string::npos);
  ASSERT_TRUE(store_.remove("c0", "net1").ok());  // the pod's DEL
  const std::string text = metrics.render();
  EXPECT_EQ(text.find("trainer-0"), std::string::npos) << text;
  EXPECT_NE(text.find("pods=\"ml/trainer-1\""), std::string::npos);
}

TEST_F(PodMetricsTest, ARestartedDaemonShowsTheSameMap) {
  save(sriov("c0", "trainer-0", 1));
  setCounter(rdmaOfVf(1), "hw_counters", "np_cnp_sent", 9);
  const std::string first = PodMetrics({.state_dir = state_}, deps()).render();
  const std::string second = PodMetrics({.state_dir = state_}, deps()).render();
  EXPECT_EQ(first, second);
}

class StaticKubelet final : public KubeletPodSource {
 public:
  std::vector<KubeletPod> pods;
  bool answers = true;
  Result<std::vector<KubeletPod>> list() override {
    if (!answers) return makeError(ErrorCode::kTryAgainLater, "no kubelet pod-resources socket");
    return pods;
  }
};

TEST_F(PodMetricsTest, TheMapSaysWhetherKubeletAnsweredItsCrossCheck) {
  save(sriov("c0", "trainer-0", 1));
  StaticKubelet kubelet;
  kubelet.pods = {{"ml", "trainer-0", {node_.vf(0, 1).str()}}};
  PodMetrics metrics({.state_dir = state_}, deps(), &kubelet);
  EXPECT_TRUE(hasLine(metrics.render(), "rdmanet_pod_map_kubelet_answered 1"));
  kubelet.answers = false;
  const std::string text = metrics.render();
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_map_kubelet_answered 0"));
  // The CNI's state stands alone: the pod keeps its series.
  EXPECT_NE(text.find("pod=\"trainer-0\""), std::string::npos);
  // No source configured: no gauge claims anything about kubelet.
  EXPECT_EQ(PodMetrics({.state_dir = state_}, deps()).render().find("kubelet_answered"),
            std::string::npos);
}

TEST_F(PodMetricsTest, KubeletsPodResourcesDropAStaleAttachment) {
  save(sriov("old", "trainer-0", 1));
  save(sriov("new", "trainer-5", 1));
  StaticKubelet kubelet;
  kubelet.pods = {{"ml", "trainer-5", {node_.vf(0, 1).str()}}};
  const std::string text = PodMetrics({.state_dir = state_}, deps(), &kubelet).render();
  EXPECT_EQ(text.find("trainer-0"), std::string::npos);
  EXPECT_TRUE(hasLine(text, "rdmanet_pod_map_stale_attachments 1"));
}

}  // namespace
}  // namespace rdmanet::podnet
