// The CNI's network reports as the daemon takes them (deviceplugin/dra/kubelet/net_reports.h),
// and their removal with the claim's records (pod_devices.h).
#include "deviceplugin/dra/kubelet/net_reports.h"

#include <gtest/gtest.h>

#include <fstream>

#include "deviceplugin/dra/kubelet/pod_devices.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPodA = "0f3c9a5e-1b2d-4c3e-9f00-123456789abc";
constexpr const char* kPodB = "1a2b3c4d-1b2d-4c3e-9f00-123456789abc";
constexpr const char* kUid = "c1a1m000-0000-4000-8000-000000000001";

PreparedClaim claim() {
  return {.ref = {.ns = "team", .uid = kUid, .name = "c"},
          .devices = {{.pool_name = "node-1", .device_name = "vf-1"},
                      {.pool_name = "node-1", .device_name = "vf-2"},
                      {.pool_name = "node-1", .device_name = "mon", .admin_access = true}}};
}

dra::NetReport report(const std::string& ifname) {
  return {.container_id = "c1", .interface_name = ifname, .ips = {"10.0.0.5/24"}};
}

class NetReportsTest : public ::testing::Test {
 protected:
  // Our record of the claim for `pod` (what writePodDevices leaves; the content is not read).
  void record(const char* pod) {
    fs::create_directories(dir() / pod);
    std::ofstream(dir() / pod / (std::string(kUid) + ".json")) << "{}";
  }
  void write(const char* pod, const std::string& device, const std::string& text) {
    fs::create_directories(dir() / pod);
    std::ofstream(dir() / pod / dra::netReportName(kUid, device)) << text;
  }
  fs::path dir() const { return tmp_.path(); }
  sim::TempDir tmp_;
};

TEST_F(NetReportsTest, AReportCountsOnlyBesideOurRecordOfTheClaimForADeviceWePrepared) {
  record(kPodA);
  write(kPodA, "vf-1", dra::renderNetReport(report("eth1")));
  write(kPodA, "other", dra::renderNetReport(report("eth2")));  // not the claim's device
  write(kPodA, "mon", dra::renderNetReport(report("eth3")));    // admin access: never attached
  write(kPodB, "vf-2", dra::renderNetReport(report("eth4")));   // no record of the claim there
  const ClaimNetReports got = readClaimNetReports(dir(), claim());
  ASSERT_EQ(got.by_device.size(), 1u);
  EXPECT_EQ(got.by_device.at("vf-1"), report("eth1"));
  EXPECT_TRUE(got.refused.empty());
}

TEST_F(NetReportsTest, ASymlinkOrABadReportIsRefusedAndNamed) {
  record(kPodA);
  write(kPodA, "vf-1", R"({"containerID": "c1", "interfaceName": "eth1", "ips": ["10.0.0.1"]})");
  std::ofstream(dir() / "target") << dra::renderNetReport(report("eth2"));
  fs::create_symlink(dir() / "target", dir() / kPodA / dra::netReportName(kUid, "vf-2"));
  const ClaimNetReports got = readClaimNetReports(dir(), claim());
  EXPECT_TRUE(got.by_device.empty());
  ASSERT_EQ(got.refused.size(), 2u);
  EXPECT_NE(got.refused[0].find("vf-1.net: network report: ips"), std::string::npos)
      << got.refused[0];
  EXPECT_NE(got.refused[1].find("vf-2.net"), std::string::npos) << got.refused[1];
}

TEST_F(NetReportsTest, ASharedClaimsFirstPodByUidCounts) {
  record(kPodA);
  record(kPodB);
  write(kPodB, "vf-1", dra::renderNetReport(report("eth2")));
  write(kPodA, "vf-1", dra::renderNetReport(report("eth1")));
  EXPECT_EQ(readClaimNetReports(dir(), claim()).by_device.at("vf-1"), report("eth1"));
}

TEST_F(NetReportsTest, UnprepareAndTheStartupSweepRemoveTheClaimsReports) {
  record(kPodA);
  write(kPodA, "vf-1", dra::renderNetReport(report("eth1")));
  ASSERT_TRUE(removePodDevices(dir(), kUid).ok());
  EXPECT_FALSE(fs::exists(dir() / kPodA)) << "the pod dir goes with its last file";

  record(kPodA);
  write(kPodA, "vf-1", dra::renderNetReport(report("eth1")));
  sweepPodDevices(dir(), {"another-claim"});
  EXPECT_FALSE(fs::exists(dir() / kPodA));

  record(kPodA);
  write(kPodA, "vf-1", dra::renderNetReport(report("eth1")));
  sweepPodDevices(dir(), {kUid});
  EXPECT_TRUE(fs::exists(dir() / kPodA / dra::netReportName(kUid, "vf-1")));
}

}  // namespace
}  // namespace rdmanet::dp
