// The claim's network status (issue 32, section 1): the CNI's network report of a claim's device
// (common/dra/net_report.h) goes into the claim's status.devices as networkData and a Ready
// condition, written by the DRA front (claim_network_sync.h) through the product's REST client
// to the stand-in API server, which validates status.devices as the real one does
// (tests/fakes/apiserver/validate_claim_status.mjs). Time is the FakeClock's: a pass runs when
// the test moves it by a second.
#include <gtest/gtest.h>

#include <fstream>

#include "common/dra/net_report.h"
#include "deviceplugin/dra/apiserver/device_status.h"
#include "tests/deviceplugin/dra/prepare_fixture.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::DraPrepareTest;
using testing::kDriver;
using testing::kNode;

constexpr const char* kPod = "e5000000-0000-4000-8000-000000000001";
constexpr const char* kOtherDriver = "gpu.example.com";

class DraNetworkStatusTest : public DraPrepareTest {
 protected:
  void SetUp() override {
    DraPrepareTest::SetUp();
    with_claim_status_ = true;
    startRegistered(api_->url());
  }
  std::string path(const std::string& name) const {
    return "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/" + name;
  }
  // A claim of one VF of ours and a GPU of another driver, whose entry is in status.devices
  // already; prepared for kPod. Returns its UID.
  std::string preparedClaim(const std::string& name, const std::string& device) {
    const std::string uid = createClaim(
        name, json::array({result("nic", device), result("gpu", "gpu-0", kOtherDriver)}),
        {"nic", "gpu"}, json::array({{{"resource", "pods"}, {"name", "p"}, {"uid", kPod}}}));
    kube::KubeClient c(testing::serverConfig(api_->url()));
    auto claim = c.get(path(name));
    EXPECT_TRUE(claim.ok());
    (*claim)["status"]["devices"] = json::array({otherEntry()});
    EXPECT_TRUE(c.update(path(name) + "/status", *claim).ok());
    auto resp = kubelet_->prepare({{"team", uid, name}});
    EXPECT_TRUE(resp && resp->claims().at(uid).error().empty()) << kubelet_->lastError();
    return uid;
  }
  static json otherEntry() {
    return {{"driver", kOtherDriver},
            {"pool", kNode},
            {"device", "gpu-0"},
            {"conditions", json::array({{{"type", "Healthy"},
                                         {"status", "True"},
                                         {"reason", "Probed"},
                                         {"message", "theirs"},
                                         {"lastTransitionTime", "2026-01-01T00:00:00Z"}}})}};
  }
  // What the CNI writes (cni/modes/claim_report.cc).
  void report(const std::string& uid, const std::string& device, const dra::NetReport& r) {
    std::ofstream(podDevicesDir() / kPod / dra::netReportName(uid, device))
        << dra::renderNetReport(r);
  }
  json devicesOf(const std::string& name) {
    kube::KubeClient c(testing::serverConfig(api_->url()));
    auto claim = c.get(path(name));
    if (!claim.ok() || !(*claim)["status"].contains("devices")) return json::array();
    return (*claim)["status"]["devices"];
  }
  // Moves the clock by a pass and waits for the claim's status.devices to satisfy `pred`.
  bool passUntil(const std::string& name, const std::function<bool(const json&)>& pred) {
    EXPECT_TRUE(clock_.waitIdle(2));
    clock_.advance(std::chrono::seconds(1));
    return turnUntil([&] { return pred(devicesOf(name)); });
  }
  static const json* ours(const json& devices) {
    for (const json& d : devices) {
      if (d["driver"] == kDriver) return &d;
    }
    return nullptr;
  }
  static dra::NetReport ready() {
    return {.container_id = "c1",
            .interface_name = "eth1",
            .ips = {"10.56.0.2/24"},
            .hardware_address = "02:00:00:aa:00:01"};
  }
};

TEST_F(DraNetworkStatusTest, AnAttachedDevicesEntryCarriesItsNetworkDataAndDelRemovesIt) {
  const std::string dev = dra::pciDeviceName(node_.vf(0, 2));
  const std::string uid = preparedClaim("net", dev);
  report(uid, dev, ready());
  ASSERT_TRUE(passUntil("net", [](const json& d) { return ours(d) != nullptr; }))
      << devicesOf("net").dump();
  const json devices = devicesOf("net");
  ASSERT_EQ(devices.size(), 2u) << devices.dump();
  EXPECT_EQ(devices[0], otherEntry()) << "another driver's entry is left as it was";
  const json& e = *ours(devices);
  EXPECT_EQ(e["pool"], kNode);
  EXPECT_EQ(e["device"], dev);
  EXPECT_EQ(e["networkData"], json({{"interfaceName", "eth1"},
                                    {"ips", {"10.56.0.2/24"}},
                                    {"hardwareAddress", "02:00:00:aa:00:01"}}));
  ASSERT_EQ(e["conditions"].size(), 1u);
  EXPECT_EQ(e["conditions"][0]["type"], "Ready");
  EXPECT_EQ(e["conditions"][0]["status"], "True");
  EXPECT_EQ(e["conditions"][0]["reason"], "InterfaceReady");
  EXPECT_EQ(e["conditions"][0]["lastTransitionTime"], kWallNow);

  // DEL withdraws the report: the next pass removes our entry, and only ours.
  fs::remove(podDevicesDir() / kPod / dra::netReportName(uid, dev));
  ASSERT_TRUE(passUntil("net", [](const json& d) { return ours(d) == nullptr; }));
  EXPECT_EQ(devicesOf("net"), json::array({otherEntry()}));
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "net"}}));
}

TEST_F(DraNetworkStatusTest, AFailedAddGivesReadyFalseWithTheReasonAndUnprepareRemovesIt) {
  const std::string dev = dra::pciDeviceName(node_.vf(0, 3));
  const std::string uid = preparedClaim("failed", dev);
  report(uid, dev,
         {.container_id = "c1",
          .interface_name = "eth1",
          .error_code = 100,
          .error_message = "VF 0000:81:10.6 has no netdev"});
  ASSERT_TRUE(passUntil("failed", [](const json& d) { return ours(d) != nullptr; }));
  const json e = *ours(devicesOf("failed"));
  EXPECT_FALSE(e.contains("networkData")) << e.dump();
  EXPECT_EQ(e["conditions"][0]["status"], "False");
  EXPECT_EQ(e["conditions"][0]["reason"], "DeviceNotFound");
  EXPECT_EQ(e["conditions"][0]["message"],
            "CNI ADD of eth1 failed (error 100): VF 0000:81:10.6 has no netdev");

  // Unprepare (the pod is gone): the report goes with the record, the entry with the next pass.
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "failed"}}));
  EXPECT_FALSE(fs::exists(podDevicesDir() / kPod / dra::netReportName(uid, dev)));
  ASSERT_TRUE(passUntil("failed", [](const json& d) { return ours(d) == nullptr; }));
  EXPECT_EQ(devicesOf("failed"), json::array({otherEntry()}));
}

TEST_F(DraNetworkStatusTest, AConflictingWriteIsReadAgainAndWritten) {
  const std::string dev = dra::pciDeviceName(node_.vf(0, 1));
  const std::string uid = preparedClaim("raced", dev);
  api_->fail("PUT", path("raced") + "/status", 409, 2);
  report(uid, dev, ready());
  ASSERT_TRUE(passUntil("raced", [](const json& d) { return ours(d) != nullptr; }));
  EXPECT_EQ(devicesOf("raced")[0], otherEntry());
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "raced"}}));
}

TEST_F(DraNetworkStatusTest, ReportsTheDaemonCannotTrustAreNotWritten) {
  const std::string dev = dra::pciDeviceName(node_.vf(0, 0));
  const std::string uid = preparedClaim("untrusted", dev);
  const fs::path file = podDevicesDir() / kPod / dra::netReportName(uid, dev);
  // A symlink, a report of a device the claim does not hold, a report under a pod dir without
  // our record of the claim, and one that does not parse.
  const fs::path elsewhere = kubelet_dir_ / "elsewhere.net";
  std::ofstream(elsewhere) << dra::renderNetReport(ready());
  fs::create_symlink(elsewhere, file);
  report(uid, "not-ours", ready());
  fs::create_directories(podDevicesDir() / "f0000000-0000-4000-8000-00000000000f");
  std::ofstream(podDevicesDir() / "f0000000-0000-4000-8000-00000000000f" /
                dra::netReportName(uid, dev))
      << dra::renderNetReport(ready());
  ASSERT_TRUE(clock_.waitIdle(2));
  clock_.advance(std::chrono::seconds(1));
  ASSERT_TRUE(clock_.waitIdle(2));
  EXPECT_EQ(devicesOf("untrusted"), json::array({otherEntry()}));
  // The same report, as a file, is taken.
  fs::remove(file);
  std::ofstream(file) << R"({"containerID": "c1", "interfaceName": "eth1", "ips": [], "x": 1})";
  clock_.advance(std::chrono::seconds(1));
  ASSERT_TRUE(clock_.waitIdle(2));
  EXPECT_EQ(devicesOf("untrusted"), json::array({otherEntry()}));
  report(uid, dev, ready());
  ASSERT_TRUE(passUntil("untrusted", [](const json& d) { return ours(d) != nullptr; }));
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "untrusted"}}));
}

// The stand-in server's status validation is what makes the tests above prove the wire format:
// it refuses what the real one refuses.
TEST_F(DraNetworkStatusTest, TheStandInServerRefusesAStatusTheRealOneWould) {
  const std::string dev = dra::pciDeviceName(node_.vf(0, 2));
  const std::string uid = preparedClaim("refused", dev);
  kube::KubeClient c(testing::serverConfig(api_->url()));
  const json good = dra::deviceStatusEntry(kDriver, kNode, dev, "", ready(), nullptr, kWallNow);
  auto put = [&](const json& entry) {
    auto claim = c.get(path("refused"));
    EXPECT_TRUE(claim.ok());
    (*claim)["status"]["devices"] = json::array({otherEntry(), entry});
    return c.update(path("refused") + "/status", *claim);
  };
  ASSERT_TRUE(put(good).ok());
  json not_allocated = good;
  not_allocated["device"] = "pci-0000-ff-00-0";
  json not_canonical = good;
  not_canonical["networkData"]["ips"] = {"10.056.0.2/24"};
  json no_time = good;
  no_time["conditions"][0].erase("lastTransitionTime");
  json bad_reason = good;
  bad_reason["conditions"][0]["reason"] = "not camel case";
  for (const json& bad : {not_allocated, not_canonical, no_time, bad_reason}) {
    auto r = put(bad);
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_EQ(r.error().http_status, 422) << r.error().msg;
  }
  ASSERT_TRUE(kubelet_->unprepare({{"team", uid, "refused"}}));
}

}  // namespace
}  // namespace rdmanet::dp
