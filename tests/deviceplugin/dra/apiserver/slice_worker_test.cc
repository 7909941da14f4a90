// The DRA front's devices in ResourceSlices: DraFront in the daemon loop hands its snapshots to
// the SliceWorker, which publishes them to the stand-in API server (which validates every slice
// against resource.k8s.io/v1). Attributes follow the simulated node's topology; a link going
// down taints the devices behind it within a second, and recovery clears the taint.
#include "deviceplugin/dra/apiserver/slice_worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ranges>

#include "tests/deviceplugin/dra/dra_fixture.h"
#include "tests/fakes/fake_apiserver.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::kNode;

class SliceWorkerTest : public testing::DraDaemonFixture {
 protected:
  void SetUp() override {
    DraDaemonFixture::SetUp();
    ASSERT_TRUE(api_.ok()) << api_.error();
    api_.createNode(kNode);
    api_client_ = std::make_unique<kube::KubeClient>(api_.config());
    dra::PublisherOptions po;
    po.node_name = kNode;
    worker_ = std::make_unique<SliceWorker>(*api_client_, po, node_.root(), clock_);
  }
  void TearDown() override {
    stopDaemon();
    worker_.reset();
    DraDaemonFixture::TearDown();
  }

  // Device name -> spec.devices[] entry, over every slice of the node.
  std::map<std::string, json> publishedDevices() {
    kube::ListOptions lo;
    lo.field_selector = std::string("spec.nodeName=") + kNode;
    auto l = api_client_->list("/apis/resource.k8s.io/v1/resourceslices", lo);
    std::map<std::string, json> out;
    if (!l.ok()) return out;
    for (const json& s : (*l)["items"]) {
      // Counter-set slices (KEP-4815) hold no devices.
      for (const json& d : s["spec"].value("devices", json::array())) {
        out[d["name"].get<std::string>()] = d;
      }
    }
    return out;
  }
  // Polls the API server until `pred` holds on the published devices, up to `timeout`.
  bool waitDevices(const std::function<bool(const std::map<std::string, json>&)>& pred,
                   std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    do {
      if (pred(publishedDevices())) return true;
      daemon_->runOnce(10ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return pred(publishedDevices());
  }
  // The worker records a publish's generation after the server has the slices: wait for it.
  bool waitGeneration(int64_t generation, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (worker_->status().generation != generation) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      daemon_->runOnce(10ms);
    }
    return true;
  }
  static bool tainted(const json& d) {
    return d.contains("taints") && !d["taints"].empty() &&
           d["taints"][0]["key"] == "rdmanet.io/unhealthy" &&
           d["taints"][0]["effect"] == "NoSchedule";
  }

  rdmanet::testing::FakeApiServer api_;
  std::unique_ptr<kube::KubeClient> api_client_;
  std::unique_ptr<SliceWorker> worker_;
};

TEST_F(SliceWorkerTest, EveryDeviceIsPublishedWithItsTopologyAndPoolAttributes) {
  startDaemon(api_.url(), worker_.get());
  ASSERT_TRUE(waitDevices([](const auto& d) { return d.size() == 20; }, 10s));
  auto devs = publishedDevices();
  const json& vf = devs.at(dra::pciDeviceName(node_.vf(2, 1)));
  const json& a = vf["attributes"];
  EXPECT_EQ(a["resource.kubernetes.io/pciBusID"]["string"], node_.vf(2, 1).str());
  EXPECT_EQ(a["resource.kubernetes.io/numaNode"]["int"], 1);  // ens2 is on socket 1
  EXPECT_EQ(a["resource.kubernetes.io/pcieRoot"]["string"], "pci0000:80");
  EXPECT_EQ(a["k8s.cni.cncf.io/resourceName"]["string"], "rdma/vf");
  EXPECT_EQ(a["rdmanet.io/pool"]["string"], "rdma/vf");
  EXPECT_EQ(a["rdmanet.io/vfIndex"]["int"], 1);
  EXPECT_EQ(a["rdmanet.io/pfPciAddress"]["string"], node_.pf(2).str());
  EXPECT_EQ(a["rdmanet.io/pfName"]["string"], node_.pfNetdev(2));
  EXPECT_TRUE(a.contains("rdmanet.io/rdmaDevice"));
  EXPECT_EQ(a["rdmanet.io/linkType"]["string"], "ether");  // the PF's link layer
  EXPECT_FALSE(tainted(vf));
  const json& pf = devs.at(dra::pciDeviceName(node_.pf(0)));
  EXPECT_EQ(pf["attributes"]["rdmanet.io/pool"]["string"], "rdma/shared");
  EXPECT_EQ(pf["attributes"]["resource.kubernetes.io/pcieRoot"]["string"], "pci0000:00");
  EXPECT_EQ(pf["attributes"]["rdmanet.io/linkType"]["string"], "ether");
  EXPECT_FALSE(pf.contains("allowMultipleAllocations"));  // behind a flag
}

// Issue 32 §2: with `vfBandwidthMbps`, each VF consumes its share of a counter set that holds
// its PF's link speed, so the scheduler never places more VFs on a port than it carries.
TEST_F(SliceWorkerTest, VfsOfAPoolWithAShareConsumeItFromTheirPfsCounterSet) {
  config_.pools[0].vf_bandwidth_mbps = 30000;  // rdma/vf: 3 VFs fit on a 100G port
  startDaemon(api_.url(), worker_.get());
  ASSERT_TRUE(waitDevices([](const auto& d) { return d.size() == 20; }, 10s));
  auto devs = publishedDevices();
  const json& vf = devs.at(dra::pciDeviceName(node_.vf(2, 1)));
  EXPECT_EQ(vf["capacity"], json::parse(R"({"rdmanet.io/bandwidth": {"value": "30G"}})"));
  EXPECT_EQ(vf["consumesCounters"],
            json::array({{{"counterSet", dra::pciDeviceName(node_.pf(2))},
                          {"counters", {{"bandwidth", {{"value", "30G"}}}}}}}));
  // The shared pool's PFs are not partitions.
  EXPECT_FALSE(devs.at(dra::pciDeviceName(node_.pf(0))).contains("consumesCounters"));

  // One set per PF whose VFs are published, each the PF's 100 Gb/s (the simulated node's speed).
  std::map<std::string, std::string> want;
  for (const json& d : devs | std::views::values) {
    if (!d.contains("consumesCounters")) continue;
    want[d["consumesCounters"][0]["counterSet"].get<std::string>()] = "100G";
  }
  EXPECT_FALSE(want.empty());
  // Counter set -> bandwidth, over the node's slices. The set's slice is written after the
  // devices' (one publish, several requests): polled like the devices.
  const auto counterSets = [&] {
    kube::ListOptions lo;
    lo.field_selector = std::string("spec.nodeName=") + kNode;
    std::map<std::string, std::string> sets;
    auto l = api_client_->list("/apis/resource.k8s.io/v1/resourceslices", lo);
    if (!l.ok()) return sets;
    for (const json& s : (*l)["items"]) {
      for (const json& c : s["spec"].value("sharedCounters", json::array())) {
        sets[c["name"].get<std::string>()] = c["counters"]["bandwidth"]["value"].get<std::string>();
      }
    }
    return sets;
  };
  ASSERT_TRUE(waitDevices([&](const auto&) { return counterSets() == want; }, 10s))
      << "counter sets: " << counterSets().size();
  EXPECT_FALSE(worker_->status().partitions_dropped);
}

TEST_F(SliceWorkerTest, LinkDownTaintsTheDevicesBehindItWithinASecondAndRecoveryClearsIt) {
  startDaemon(api_.url(), worker_.get());
  const std::string vf = dra::pciDeviceName(node_.vf(0, 2));
  const std::string other = dra::pciDeviceName(node_.vf(1, 0));
  ASSERT_TRUE(waitDevices([](const auto& d) { return d.size() == 20; }, 10s));
  ASSERT_TRUE(waitGeneration(1, 5s)) << worker_->status().generation;
  const int64_t gen = 1;

  node_.tree().setNetdevUp(node_.pfNetdev(0), false);
  clock_.advance(30s);  // no netlink here: the resync reads sysfs
  daemon_->runOnce(0ms);
  ASSERT_TRUE(waitDevices([&](const auto& d) { return d.count(vf) && tainted(d.at(vf)); }, 1s));
  auto devs = publishedDevices();
  EXPECT_TRUE(tainted(devs.at(dra::pciDeviceName(node_.pf(0)))));
  EXPECT_FALSE(tainted(devs.at(other)));
  EXPECT_TRUE(waitGeneration(gen + 1, 5s)) << worker_->status().generation;

  node_.tree().setNetdevUp(node_.pfNetdev(0), true);
  clock_.advance(30s);
  daemon_->runOnce(0ms);
  ASSERT_TRUE(waitDevices([&](const auto& d) { return d.count(vf) && !tainted(d.at(vf)); }, 1s));
}

// Whether any attribute of `d` is the string `value`, or (with an empty `value`) holds a byte
// that is not printable ASCII.
bool anyAttribute(const json& d, const std::string& value) {
  for (const auto& [key, a] : d["attributes"].items()) {
    if (!a.contains("string")) continue;
    const std::string v = a["string"].get<std::string>();
    if (!value.empty() && v == value) return true;
    if (value.empty() && std::any_of(v.begin(), v.end(), [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f;
        })) {
      return true;
    }
  }
  return false;
}

// A tenant with NET_ADMIN renamed a netdev to bytes that are not UTF-8 (issue 29): here the PF's,
// whose name every VF behind it carries as rdmanet.io/pfName. The slice worker's JSON encoder
// threw on it, nothing caught it, and the daemon died, and again at every start. Now discovery
// leaves the name out (the PF shows without a netdev), and publishing goes on: the next change,
// another PF's link going down, still reaches the slices.
TEST_F(SliceWorkerTest, ANetdevNameThatIsNotUtf8IsLeftOutAndPublishingGoesOn) {
  startDaemon(api_.url(), worker_.get());
  ASSERT_TRUE(waitDevices([](const auto& d) { return d.size() == 20; }, 10s));
  ASSERT_TRUE(waitGeneration(1, 5s)) << worker_->status().generation;
  const std::string renamed = node_.pfNetdev(0);
  node_.tree().removeNetdev(renamed);
  node_.tree().addNetdev(node_.pf(0), {.name = "pf\xff\xfe", .ifindex = 900});
  clock_.advance(30s);  // the resync re-reads the PFs' netdevs
  daemon_->runOnce(0ms);
  ASSERT_TRUE(waitDevices(
      [&](const auto& devs) {
        return !devs.empty() && std::none_of(devs.begin(), devs.end(), [&](const auto& d) {
          return anyAttribute(d.second, renamed);
        });
      },
      5s))
      << "the rename never reached the slices";
  for (const auto& [name, d] : publishedDevices()) {
    EXPECT_FALSE(anyAttribute(d, ""))
        << name << ": " << d.dump(-1, ' ', true, json::error_handler_t::replace);
  }

  node_.tree().setNetdevUp(node_.pfNetdev(1), false);
  clock_.advance(30s);
  daemon_->runOnce(0ms);
  const std::string vf = dra::pciDeviceName(node_.vf(1, 0));
  EXPECT_TRUE(waitDevices([&](const auto& d) { return d.count(vf) && tainted(d.at(vf)); }, 5s))
      << "publishing stopped after the rename";
  EXPECT_EQ(worker_->status().failures, 0);
}

// Shutdown (issue 23): the worker used to join a thread that sat out a publish's requests and
// retries (up to about a minute against a stalled API server).
TEST_F(SliceWorkerTest, DestroyingTheWorkerDuringAStalledPublishReturnsWithinTwoSeconds) {
  api_.hang("GET", "/apis/resource.k8s.io/v1/resourceslices", 60000, 10);
  kube::KubeClient own(api_.config());  // the worker cancels its client: not the test's
  dra::PublisherOptions po;
  po.node_name = kNode;
  auto stalled = std::make_unique<SliceWorker>(own, po, node_.root(), clock_);
  startDaemon(api_.url(), stalled.get());
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (api_.stats()["requests"].value("GET", 0) < 2 && std::chrono::steady_clock::now() < until) {
    daemon_->runOnce(10ms);  // the node's GET, then the stalled list
  }
  stopDaemon();
  const auto t0 = std::chrono::steady_clock::now();
  stalled.reset();
  const auto took = std::chrono::steady_clock::now() - t0;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
  EXPECT_LT(took, 2s) << ms << " ms";
  std::printf("SliceWorker destroyed during a stalled publish in %lld ms\n",
              static_cast<long long>(ms));
}

}  // namespace
}  // namespace rdmanet::dp
