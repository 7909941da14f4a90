// A corrupt prepared-claims checkpoint at start (deviceplugin/dra/kubelet/checkpoint_recovery.h):
// the daemon no longer refuses to start. It moves the file aside and restores the backup, or,
// without a good one, rebuilds the checkpoint from the claims the stand-in API server holds for
// this node and driver; the front's recovery note (/readyz) says which. Each path ends with a
// prepare answered from the recovered checkpoint and an unprepare that leaves nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::kDriver;
using testing::kNode;
using testing::readJson;

class DraRecoveryTest : public testing::DraPrepareTest {
 protected:
  fs::path checkpoint() const { return kubelet_dir_ / "plugins" / kDriver / "checkpoint.json"; }
  fs::path backup() const { return checkpoint().string() + ".backup"; }
  std::set<std::string> checkpointed() {
    std::set<std::string> out;
    const json ckpt = readJson(checkpoint());
    if (ckpt.is_object() && ckpt.contains("claims")) {
      for (const auto& [uid, c] : ckpt["claims"].items()) out.insert(uid);
    }
    return out;
  }
  // The files moved aside in the checkpoint's directory.
  std::vector<fs::path> movedAside() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(checkpoint().parent_path())) {
      if (e.path().filename().string().find(".corrupt-") != std::string::npos) {
        out.push_back(e.path());
      }
    }
    return out;
  }
  // A claim on one VF of this node, reserved for `pod`, prepared through kubelet.
  std::string prepareFor(const std::string& name, const PciAddress& vf, const std::string& pod) {
    const std::string uid =
        createClaim(name, json::array({result("nic", dra::pciDeviceName(vf))}), {"nic"},
                    json::array({{{"resource", "pods"}, {"name", name + "-pod"}, {"uid", pod}}}));
    auto resp = kubelet_->prepare({{"team", uid, name}});
    EXPECT_TRUE(resp) << kubelet_->lastError();
    if (resp) {
      EXPECT_EQ(resp->claims().at(uid).error(), "");
    }
    return uid;
  }
  void overwrite(const fs::path& p, const std::string& content) {
    fs::remove(p);
    std::ofstream(p, std::ios::binary) << content;
  }
  // After recovery the claim is whole: its spec, its pod's record, and a prepare answered the
  // same; an unprepare then leaves nothing of it.
  void expectWholeThenGone(const std::string& name, const std::string& uid,
                           const std::string& pod) {
    EXPECT_TRUE(fs::exists(cdi_dir_ / claimSpecFileName(uid)));
    EXPECT_TRUE(fs::exists(podDevicesDir() / pod / (uid + ".json")));
    auto again = kubelet_->prepare({{"team", uid, name}});
    ASSERT_TRUE(again) << kubelet_->lastError();
    EXPECT_EQ(again->claims().at(uid).error(), "");
    EXPECT_EQ(again->claims().at(uid).devices_size(), 1);
    ASSERT_TRUE(kubelet_->unprepare({{"team", uid, name}}));
    EXPECT_FALSE(fs::exists(cdi_dir_ / claimSpecFileName(uid)));
    EXPECT_FALSE(fs::exists(podDevicesDir() / pod));
    EXPECT_FALSE(checkpointed().contains(uid));
  }
};

TEST_F(DraRecoveryTest, ACorruptCheckpointWithAGoodBackupStartsFromTheBackup) {
  startRegistered(api_->url());
  const std::string pod = "a1000000-0000-4000-8000-000000000001";
  const std::string kept = prepareFor("bk-kept", node_.vf(0, 0), pod);
  // The second prepare rewrites the checkpoint: the backup is the one that held `kept` alone.
  prepareFor("bk-later", node_.vf(0, 1), "a1000000-0000-4000-8000-000000000002");
  stopDaemon();
  overwrite(checkpoint(), "{\"version\": 1, \"claims\": {\"" + kept + "\": {\"namesp");

  startRegistered(api_->url());
  EXPECT_THAT(front_->recoveryNote(), HasSubstr("restored from the backup"));
  EXPECT_EQ(checkpointed(), std::set<std::string>{kept});
  const auto aside = movedAside();
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_THAT(front_->recoveryNote(), HasSubstr(aside[0].string()));
  expectWholeThenGone("bk-kept", kept, pod);
  deleteClaim("bk-kept");
  deleteClaim("bk-later");
}

// Truncated by a torn write, emptied, and overwritten with garbage: with no backup the claims
// come back from the API server, and only this node's, this driver's, reserved ones.
TEST_F(DraRecoveryTest, ACorruptCheckpointWithoutABackupIsRebuiltFromTheApiServer) {
  const std::vector<std::string> corruptions = {
      "{\"version\": 1, \"claims\": {\"", "", std::string("\x7f\x45\x4c\x46\x00\xff garbage", 14)};
  for (size_t i = 0; i < corruptions.size(); ++i) {
    SCOPED_TRACE(i);
    const std::string n = std::to_string(i);
    const std::string pod = "b200000" + n + "-0000-4000-8000-000000000001";
    startRegistered(api_->url());
    const std::string mine = prepareFor("api-mine-" + n, node_.vf(1, 0), pod);
    // Neither is this node's to prepare: another node's VF, and a claim reserved for no pod.
    const std::string other_node = createClaim(
        "api-other-node-" + n, json::array({result("nic", "pci-0000-99-00-0", kDriver, "node-b")}),
        {"nic"}, json::array({{{"resource", "pods"}, {"name", "x"}, {"uid", pod}}}));
    const std::string unreserved = createClaim(
        "api-unreserved-" + n, json::array({result("nic", dra::pciDeviceName(node_.vf(1, 1)))}));
    stopDaemon();
    fs::remove(backup());
    overwrite(checkpoint(), corruptions[i]);
    // /var/run survives (no reboot): the spec and record stay while the checkpoint is rebuilt.
    startRegistered(api_->url());
    ASSERT_TRUE(turnUntil([&] {
      return front_->recoveryNote().find("rebuilt from the API server") != std::string::npos;
    })) << front_->recoveryNote();
    EXPECT_THAT(front_->recoveryNote(), HasSubstr("no backup: rebuilding from the API server"));
    const auto ck = checkpointed();
    EXPECT_TRUE(ck.contains(mine));
    EXPECT_FALSE(ck.contains(other_node));
    EXPECT_FALSE(ck.contains(unreserved));
    EXPECT_EQ(movedAside().size(), 1u);
    expectWholeThenGone("api-mine-" + n, mine, pod);
    stopDaemon();
    // Unprepared, as when its pod is gone: the API server drops it too.
    for (const char* c : {"api-mine-", "api-other-node-", "api-unreserved-"}) deleteClaim(c + n);
    for (const fs::path& f : movedAside()) fs::remove(f);
  }
}

TEST_F(DraRecoveryTest, AfterARebootTheRebuiltClaimGetsItsSpecAndRecordAgain) {
  const std::string pod = "c3000000-0000-4000-8000-000000000001";
  startRegistered(api_->url());
  const std::string uid = prepareFor("reboot-mine", node_.vf(0, 2), pod);
  stopDaemon();
  fs::remove(backup());
  overwrite(checkpoint(), "garbage");
  fs::remove_all(cdi_dir_);  // a reboot empties /var/run as well
  fs::remove_all(podDevicesDir());
  startRegistered(api_->url());
  ASSERT_TRUE(turnUntil([&] { return checkpointed().contains(uid); })) << front_->recoveryNote();
  expectWholeThenGone("reboot-mine", uid, pod);
  deleteClaim("reboot-mine");
}

}  // namespace
}  // namespace rdmanet::dp
