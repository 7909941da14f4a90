// Device records for the CNI (deviceplugin/dra/kubelet/pod_devices.h) beyond the one pod a claim
// is first prepared for: a claim shared by several pods gives each of them, later ones included,
// the device record the CNI looks for; and a result with admin access (a monitoring pod's) gets
// its CDI device but never a record, so the CNI cannot attach it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/kubelet/cdi_runtime.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::DraPrepareTest;
using testing::kDriver;
using testing::readJson;

constexpr const char* kPod1 = "d4000000-0000-4000-8000-000000000001";
constexpr const char* kPod2 = "d4000000-0000-4000-8000-000000000002";
constexpr const char* kPod3 = "d4000000-0000-4000-8000-000000000003";

json podRef(const std::string& name, const std::string& uid) {
  return {{"resource", "pods"}, {"name", name}, {"uid", uid}};
}

class DraSharedClaimTest : public DraPrepareTest {
 protected:
  // status.reservedFor of claim `name` becomes `pods`, as the scheduler sets it for a new pod.
  void reserveFor(const std::string& name, const json& pods) {
    kube::KubeClient c(testing::serverConfig(api_->url()));
    const std::string path = "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/" + name;
    auto claim = c.get(path);
    ASSERT_TRUE(claim.ok()) << claim.error().msg;
    (*claim)["status"]["reservedFor"] = pods;
    ASSERT_TRUE(c.update(path, *claim).ok());
  }
  fs::path record(const std::string& pod, const std::string& uid) const {
    return podDevicesDir() / pod / (uid + ".json");
  }
};

TEST_F(DraSharedClaimTest, ASharedClaimsLaterPodGetsItsDeviceRecordWithinThreeSecondsOnTheClock) {
  startRegistered(api_->url());
  const PciAddress vf = node_.vf(0, 3);
  const std::string uid =
      createClaim("shared", json::array({result("nic", dra::pciDeviceName(vf))}), {"nic"},
                  json::array({podRef("first", kPod1)}));
  auto resp = kubelet_->prepare({{"team", uid, "shared"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  ASSERT_EQ(resp->claims().at(uid).error(), "");
  ASSERT_TRUE(fs::exists(record(kPod1, uid)));
  ASSERT_FALSE(fs::exists(record(kPod2, uid)));

  // A second pod on the node uses the claim: the scheduler reserves it for the pod, and kubelet,
  // which prepared the claim already, does not call prepare again.
  reserveFor("shared", json::array({podRef("first", kPod1), podRef("second", kPod2)}));
  ASSERT_TRUE(clock_.waitIdle());
  EXPECT_FALSE(fs::exists(record(kPod2, uid))) << "not before the clock moves";
  clock_.advance(std::chrono::seconds(3));
  // The checkpoint lists the new pod, so a reboot's restore writes its record again too. It is
  // written last (after the record), so waiting for it waits for the whole refresh.
  const fs::path ckpt = kubelet_dir_ / "plugins" / kDriver / "checkpoint.json";
  const json::json_pointer pods("/claims/" + uid + "/pods");
  ASSERT_TRUE(turnUntil([&] {
    const json j = readJson(ckpt);
    return j.is_object() && j.contains(pods) && j[pods] == json::array({kPod1, kPod2});
  }));
  const json rec = readJson(record(kPod2, uid));
  ASSERT_EQ(rec["devices"].size(), 1u);
  EXPECT_EQ(rec["devices"][0]["pciAddress"], vf.str());
  EXPECT_EQ(rec, readJson(record(kPod1, uid)));

  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "shared"}}));
  EXPECT_FALSE(fs::exists(podDevicesDir() / kPod1));
  EXPECT_FALSE(fs::exists(podDevicesDir() / kPod2));
  deleteClaim("shared");
}

// A claim a Pod owns (from its ResourceClaimTemplate) is that pod's alone: never read again.
TEST_F(DraSharedClaimTest, APodsOwnClaimIsNotReadAgain) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("pod-own", json::array({result("nic", dra::pciDeviceName(node_.vf(0, 2)))}),
                  {"nic"}, json::array({podRef("first", kPod1)}));
  kube::KubeClient c(testing::serverConfig(api_->url()));
  const std::string path = "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/pod-own";
  auto claim = c.get(path);
  ASSERT_TRUE(claim.ok());
  (*claim)["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                                          {"kind", "Pod"},
                                                          {"name", "first"},
                                                          {"uid", kPod1},
                                                          {"controller", true}}});
  ASSERT_TRUE(c.update(path, *claim).ok());
  ASSERT_TRUE(kubelet_->prepare({{"team", uid, "pod-own"}}));
  const json ckpt = readJson(kubelet_dir_ / "plugins" / kDriver / "checkpoint.json");
  EXPECT_EQ(ckpt["claims"][uid]["podOwned"], true);
  reserveFor("pod-own", json::array({podRef("first", kPod1), podRef("other", kPod2)}));
  clock_.advance(std::chrono::seconds(3));
  ASSERT_TRUE(clock_.waitIdle()) << "the claim worker's read is done";
  EXPECT_FALSE(fs::exists(record(kPod2, uid)));
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "pod-own"}}));
  deleteClaim("pod-own");
}

TEST_F(DraSharedClaimTest, APrepareOfAnAlreadyPreparedClaimRecordsThePodsReservedSince) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("shared-again", json::array({result("nic", dra::pciDeviceName(node_.vf(1, 3)))}),
                  {"nic"}, json::array({podRef("first", kPod1)}));
  ASSERT_TRUE(kubelet_->prepare({{"team", uid, "shared-again"}}));
  reserveFor("shared-again", json::array({podRef("first", kPod1), podRef("third", kPod3)}));
  // Kubelet asks again (after its own restart): answered from the checkpoint, and the new pod's
  // record is there when the answer is.
  auto again = kubelet_->prepare({{"team", uid, "shared-again"}});
  ASSERT_TRUE(again) << kubelet_->lastError();
  EXPECT_EQ(again->claims().at(uid).error(), "");
  EXPECT_TRUE(fs::exists(record(kPod3, uid)));
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "shared-again"}}));
  EXPECT_FALSE(fs::exists(podDevicesDir() / kPod3));
  deleteClaim("shared-again");
}

TEST_F(DraSharedClaimTest, AnAdminAccessResultGetsItsCdiDeviceButNoRecordForTheCni) {
  startRegistered(api_->url());
  const PciAddress vf = node_.vf(1, 2);
  json admin = result("mon", dra::pciDeviceName(vf));
  admin["adminAccess"] = true;
  const std::string uid = createClaim("monitor", json::array({admin}), {"mon"},
                                      json::array({podRef("monitor", kPod1)}));
  auto resp = kubelet_->prepare({{"team", uid, "monitor"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  const auto& c = resp->claims().at(uid);
  ASSERT_EQ(c.error(), "");
  ASSERT_EQ(c.devices_size(), 1);
  // The monitoring container still gets the device's char devices through its CDI device.
  const testing::ContainerView seen =
      testing::applyCdi(cdi_dir_, testing::containerCdiIds(c, "mon"));
  EXPECT_TRUE(seen.unresolved.empty());
  std::set<std::string> want = charDevicesOf(vf);
  want.insert("/dev/infiniband/rdma_cm");
  EXPECT_EQ(seen.device_nodes, want);
  // But nothing the CNI could attach it from.
  EXPECT_FALSE(fs::exists(podDevicesDir() / kPod1));
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "monitor"}}));
  deleteClaim("monitor");
}

}  // namespace
}  // namespace rdmanet::dp
