// NodePrepareResources / NodeUnprepareResources end to end: the stand-in kubelet calls the DRA
// front, which reads ResourceClaims from the stand-in API server with the product's REST client
// and writes CDI specs. In process (FakeClock, simulated node), and as the real binary killed
// with SIGKILL between prepare and unprepare.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "common/kube/config.h"
#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/dra_binary_fixture.h"
#include "tests/deviceplugin/dra/kubelet/cdi_runtime.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"

extern char** environ;

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::Claim;
using testing::DraBinaryTest;
using testing::DraPrepareTest;
using ::testing::ElementsAre;
using testing::filesUnder;
using ::testing::HasSubstr;
using testing::kDriver;
using testing::kNode;
using testing::readJson;

TEST_F(DraPrepareTest, AClaimForOneVfGetsACdiSpecNamingExactlyThatVfsDevices) {
  startRegistered(api_->url());
  const PciAddress vf = node_.vf(0, 1);
  const std::string dev = dra::pciDeviceName(vf);
  const std::string uid = createClaim("one-vf", json::array({result("nic", dev)}));
  auto resp = kubelet_->prepare({{"team", uid, "one-vf"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  ASSERT_EQ(resp->claims().count(uid), 1u);
  const auto& c = resp->claims().at(uid);
  ASSERT_EQ(c.error(), "");
  ASSERT_EQ(c.devices_size(), 1);
  EXPECT_THAT(c.devices(0).request_names(), ElementsAre("nic"));
  EXPECT_EQ(c.devices(0).pool_name(), kNode);
  EXPECT_EQ(c.devices(0).device_name(), dev);
  // Its own CDI device (device nodes), its request's (env) and its request's device metadata.
  EXPECT_THAT(c.devices(0).cdi_device_ids(),
              ElementsAre("rdmanet.io/rdma=" + uid + "-" + dev, "rdmanet.io/rdma=" + uid + "_nic",
                          testing::metadataCdiId(uid)));

  const fs::path spec_file = cdi_dir_ / claimSpecFileName(uid);
  struct stat st {};
  ASSERT_EQ(::stat(spec_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  json spec = readJson(spec_file);
  EXPECT_EQ(spec["kind"], "rdmanet.io/rdma");
  ASSERT_EQ(spec["devices"].size(), 2u);
  EXPECT_EQ(spec["devices"][0]["name"], uid + "-" + dev);
  EXPECT_EQ(spec["devices"][1]["name"], uid + "_nic");
  EXPECT_EQ(spec["devices"][1]["containerEdits"]["deviceNodes"], json::array());
  // What the container that references the request ends up with, through kubelet and runtime.
  const testing::ContainerView seen =
      testing::applyCdi(cdi_dir_, testing::containerCdiIds(c, "nic"));
  EXPECT_TRUE(seen.unresolved.empty());
  std::set<std::string> want = charDevicesOf(vf);
  ASSERT_THAT(want, ::testing::Contains(::testing::StartsWith("/dev/infiniband/uverbs")));
  want.insert("/dev/infiniband/rdma_cm");
  EXPECT_EQ(seen.device_nodes, want);
  EXPECT_EQ(seen.env.at("PCIDEVICE_RDMA_VF"), vf.str());
  EXPECT_THAT(seen.env.at("NCCL_IB_HCA"), ::testing::StartsWith("="));

  // Idempotent: asked again, even with the claim gone from the API server, the same answer.
  deleteClaim("one-vf");
  auto again = kubelet_->prepare({{"team", uid, "one-vf"}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->claims().at(uid).SerializeAsString(), c.SerializeAsString());

  auto un = kubelet_->unprepare({{"team", uid, "one-vf"}});
  ASSERT_TRUE(un) << kubelet_->lastError();
  EXPECT_EQ(un->claims().at(uid).error(), "");
  EXPECT_TRUE(filesUnder(cdi_dir_).empty());
  EXPECT_EQ(readJson(front_->checkpointFile())["claims"], json::object());
  un = kubelet_->unprepare({{"team", uid, "one-vf"}});  // unknown now: still fine
  ASSERT_TRUE(un);
  EXPECT_EQ(un->claims().at(uid).error(), "");
}

TEST_F(DraPrepareTest, PrepareRecordsTheClaimsDeviceForEachReservedPodUntilUnprepare) {
  // What the CNI reads when Multus passes no deviceID (cni/modes/claimed_device.h).
  startRegistered(api_->url());
  const PciAddress vf = node_.vf(0, 1);
  const std::string pod = "4b7e2c1a-0d3f-4e5a-9b8c-7d6e5f4a3b2c";
  const std::string uid =
      createClaim("for-pod", json::array({result("nic", dra::pciDeviceName(vf))}), {"nic"},
                  json::array({{{"resource", "pods"}, {"name", "trainer-0"}, {"uid", pod}}}));
  auto resp = kubelet_->prepare({{"team", uid, "for-pod"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  ASSERT_EQ(resp->claims().at(uid).error(), "");
  const json rec = readJson(podDevicesDir() / pod / (uid + ".json"));
  ASSERT_TRUE(rec.is_object());
  ASSERT_EQ(rec["devices"].size(), 1u);
  EXPECT_EQ(rec["devices"][0]["pciAddress"], vf.str());
  EXPECT_EQ(rec["devices"][0]["resourceName"], "rdma/vf");

  // A reboot empties /var/run (the records and the CDI spec) but not the checkpoint: the next
  // start writes both again, so a sandbox made after it still finds its device.
  ASSERT_TRUE(rebootUntilRecorded(pod, uid));
  EXPECT_EQ(readJson(podDevicesDir() / pod / (uid + ".json")), rec);
  EXPECT_TRUE(fs::exists(cdi_dir_ / claimSpecFileName(uid)));

  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "for-pod"}}));
  EXPECT_FALSE(fs::exists(podDevicesDir() / pod));
}

// Issue 32 §3: the bandwidth the scheduler took of a shared PF for this claim is its share in
// the record (the CNI shapes a macvlan's egress to it), and stays so across a reboot.
TEST_F(DraPrepareTest, ASharedPfsConsumedBandwidthIsTheRecordsShare) {
  startRegistered(api_->url());
  const std::string pod = "5c8f3d2b-1e4a-4f6b-8c9d-8e7f6a5b4c3d";
  json taken = result("nic", dra::pciDeviceName(node_.pf(1)));
  taken["consumedCapacity"] = {{"rdmanet.io/bandwidth", "50G"}};
  const std::string uid =
      createClaim("share", json::array({taken}), {"nic"},
                  json::array({{{"resource", "pods"}, {"name", "trainer-1"}, {"uid", pod}}}));
  auto resp = kubelet_->prepare({{"team", uid, "share"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  ASSERT_EQ(resp->claims().at(uid).error(), "");
  const json rec = readJson(podDevicesDir() / pod / (uid + ".json"));
  ASSERT_EQ(rec["devices"].size(), 1u);
  EXPECT_EQ(rec["devices"][0]["resourceName"], "rdma/shared");
  EXPECT_EQ(rec["devices"][0]["maxTxRateMbps"], 50000);

  // After a reboot, written again from the checkpoint, share and all.
  ASSERT_TRUE(rebootUntilRecorded(pod, uid));
  EXPECT_EQ(readJson(podDevicesDir() / pod / (uid + ".json")), rec);
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "share"}}));
}

TEST_F(DraPrepareTest, AMissingCdiDirIsCreatedOnTheFirstPrepare) {
  // A fresh node may have no /var/run/cdi yet: the runtime only reads it.
  startRegistered(api_->url());
  fs::remove_all(cdi_dir_);
  const std::string dev = dra::pciDeviceName(node_.vf(0, 0));
  const std::string uid = createClaim("fresh-node", json::array({result("nic", dev)}));
  auto resp = kubelet_->prepare({{"team", uid, "fresh-node"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  EXPECT_EQ(resp->claims().at(uid).error(), "");
  EXPECT_TRUE(fs::exists(cdi_dir_ / claimSpecFileName(uid)));
}

TEST_F(DraPrepareTest, ErrorsArePerClaimAndTheGoodClaimIsStillPrepared) {
  startRegistered(api_->url());
  const std::string vf = dra::pciDeviceName(node_.vf(1, 0));
  const std::string good = createClaim("good", json::array({result("nic", vf)}));
  createClaim("wrong-uid", json::array({result("nic", vf)}));
  const std::string other_driver =
      createClaim("other-driver", json::array({result("gpu", "gpu-0", "gpu.nvidia.com")}));
  const std::string other_node =
      createClaim("other-node", json::array({result("nic", vf, kDriver, "node-b")}));
  const std::string unknown =
      createClaim("unknown", json::array({result("nic", "pci-0000-99-00-0")}));
  auto resp = kubelet_->prepare({{"team", good, "good"},
                                 {"team", "00000000-0000-0000-0000-000000000000", "wrong-uid"},
                                 {"team", other_driver, "other-driver"},
                                 {"team", other_node, "other-node"},
                                 {"team", unknown, "unknown"},
                                 {"team", "11111111-0000-0000-0000-000000000000", "absent"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  ASSERT_EQ(resp->claims_size(), 6);
  EXPECT_EQ(resp->claims().at(good).error(), "");
  EXPECT_EQ(resp->claims().at(good).devices_size(), 1);
  EXPECT_THAT(resp->claims().at("00000000-0000-0000-0000-000000000000").error(),
              HasSubstr("kubelet asked for 00000000-0000-0000-0000-000000000000"));
  EXPECT_THAT(resp->claims().at(other_driver).error(),
              HasSubstr("no device of driver rdma.rdmanet.io in pool node-a"));
  EXPECT_THAT(resp->claims().at(other_node).error(), HasSubstr("1 of other pools"));
  EXPECT_THAT(resp->claims().at(unknown).error(),
              HasSubstr("device pci-0000-99-00-0 is not a device of rdma.rdmanet.io"));
  EXPECT_THAT(resp->claims().at("11111111-0000-0000-0000-000000000000").error(), HasSubstr("404"));
  // Only the good claim left anything behind.
  EXPECT_EQ(filesUnder(cdi_dir_), testing::specsOf({good}));
}

// The real binary, killed with SIGKILL after prepare, restarted, then asked to unprepare.
TEST_F(DraBinaryTest, KillDashNineBetweenPrepareAndUnprepareLeavesNothingAfterARestart) {
  api_->createNode(kNode);
  startBinary();
  ASSERT_TRUE(kubelet_->waitRegistrations(1, 30s));
  // The binary's wiring publishes the node's devices too.
  kube::KubeClient c(testing::serverConfig(api_->url()));
  kube::ListOptions lo;
  lo.field_selector = std::string("spec.nodeName=") + kNode;
  size_t published = 0;
  (void)rdmanet::testing::eventually(
      [&] {
        auto l = c.list("/apis/resource.k8s.io/v1/resourceslices", lo);
        published = 0;
        if (l.ok()) {
          for (const auto& s : (*l)["items"]) published += s["spec"]["devices"].size();
        }
        return published == 20;
      },
      10s, 20ms);
  EXPECT_EQ(published, 20u);
  const std::string dev = dra::pciDeviceName(node_.vf(3, 2));
  const std::string uid = createClaim("crash", json::array({result("nic", dev)}));
  auto resp = kubelet_->prepare({{"team", uid, "crash"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  ASSERT_EQ(resp->claims().at(uid).error(), "");
  ASSERT_TRUE(fs::exists(cdi_dir_ / claimSpecFileName(uid)));

  stopBinary(SIGKILL);
  EXPECT_TRUE(fs::exists(cdi_dir_ / claimSpecFileName(uid)));  // nothing cleaned up on the way

  deleteClaim("crash");  // the pod is going away; unprepare must not need the API server
  startBinary();
  ASSERT_TRUE(kubelet_->waitRegistrations(2, 30s));
  // The restarted daemon still answers prepare for it from its checkpoint.
  auto again = kubelet_->prepare({{"team", uid, "crash"}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->claims().at(uid).SerializeAsString(),
            resp->claims().at(uid).SerializeAsString());
  auto un = kubelet_->unprepare({{"team", uid, "crash"}});
  ASSERT_TRUE(un) << kubelet_->lastError();
  EXPECT_EQ(un->claims().at(uid).error(), "");
  EXPECT_TRUE(filesUnder(cdi_dir_).empty());
  json ckpt = readJson(kubelet_dir_ / "plugins" / kDriver / "checkpoint.json");
  EXPECT_EQ(ckpt["claims"], json::object());
  fs::remove_all(kubeconfig_dir_);
}

}  // namespace
}  // namespace rdmanet::dp
