// Prepared claims that converge (issue 23, items 1 and 2): after a restart or a reboot the
// checkpoint and the CDI dir agree again (a checkpointed claim's lost spec is written again, a
// spec no entry owns is removed), a prepare answered from the checkpoint makes sure its spec
// exists, and an unprepare that races a prepare still reading its claim leaves nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"
#include "tests/fakes/eventually.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::DraPrepareTest;
using testing::filesUnder;
using testing::readJson;

TEST_F(DraPrepareTest, ARestartAfterTheCdiDirWasEmptiedWritesEveryCheckpointedSpecAgain) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("survivor", json::array({result("nic", dra::pciDeviceName(node_.vf(1, 2)))}));
  auto resp = kubelet_->prepare({{"team", uid, "survivor"}});
  ASSERT_TRUE(resp) << kubelet_->lastError();
  ASSERT_EQ(resp->claims().at(uid).error(), "");
  const fs::path spec = cdi_dir_ / claimSpecFileName(uid);
  const json before = readJson(spec);
  ASSERT_FALSE(before.is_discarded());

  // A reboot: the daemon gone, /var/run/cdi (a tmpfs) empty, the checkpoint still there; and a
  // spec no checkpoint entry owns (a crash between the spec write and the checkpoint write).
  stopDaemon();
  fs::remove_all(cdi_dir_);
  fs::create_directories(cdi_dir_);
  const std::string orphan = claimSpecFileName("0a0b0c0d-0000-4000-8000-000000000001");
  std::ofstream(cdi_dir_ / orphan) << "{}\n";
  const std::string foreign = "other-vendor.com-gpu_x.json";  // not ours: left alone
  std::ofstream(cdi_dir_ / foreign) << "{}\n";

  startRegistered(api_->url());
  std::set<std::string> want = testing::specsOf({uid});
  want.insert(foreign);
  EXPECT_EQ(filesUnder(cdi_dir_), want);
  EXPECT_EQ(readJson(spec), before);
}

TEST_F(DraPrepareTest, APrepareAnsweredFromTheCheckpointWritesItsLostSpecAgain) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("again", json::array({result("nic", dra::pciDeviceName(node_.vf(0, 3)))}));
  auto first = kubelet_->prepare({{"team", uid, "again"}});
  ASSERT_TRUE(first) << kubelet_->lastError();
  const fs::path spec = cdi_dir_ / claimSpecFileName(uid);
  const json before = readJson(spec);
  fs::remove(spec);
  auto second = kubelet_->prepare({{"team", uid, "again"}});
  ASSERT_TRUE(second) << kubelet_->lastError();
  EXPECT_EQ(second->claims().at(uid).error(), "");
  EXPECT_EQ(second->claims().at(uid).SerializeAsString(),
            first->claims().at(uid).SerializeAsString());
  EXPECT_EQ(readJson(spec), before);
}

TEST_F(DraPrepareTest, AnUnprepareWhileAPrepareReadsTheClaimCancelsItAndLeavesNothing) {
  startRegistered(api_->url());
  const std::string uid =
      createClaim("raced", json::array({result("nic", dra::pciDeviceName(node_.vf(2, 1)))}));
  api_->delay("GET", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/raced", 1500, 1);
  const int gets_before = api_->stats()["requests"].value("GET", 0);
  auto prepare = std::async(std::launch::async, [&] {
    return kubelet_->prepare({{"team", uid, "raced"}});
  });
  (void)rdmanet::testing::eventually(  // polling the server's counter
      [&] { return api_->stats()["requests"].value("GET", 0) > gets_before; }, 5s);
  auto un = kubelet_->unprepare({{"team", uid, "raced"}});
  ASSERT_TRUE(un) << kubelet_->lastError();
  EXPECT_EQ(un->claims().at(uid).error(), "");
  auto resp = prepare.get();
  ASSERT_TRUE(resp) << kubelet_->lastError();
  EXPECT_NE(resp->claims().at(uid).error().find("unprepared while it was being prepared"),
            std::string::npos)
      << resp->claims().at(uid).error();
  EXPECT_TRUE(filesUnder(cdi_dir_).empty());
  const json ckpt = readJson(kubelet_dir_ / "plugins" / testing::kDriver / "checkpoint.json");
  EXPECT_TRUE(ckpt.is_discarded() || ckpt["claims"].empty()) << ckpt.dump();
}

}  // namespace
}  // namespace rdmanet::dp
