// The pod → device records prepare writes for the CNI (deviceplugin/dra/kubelet/pod_devices.h).
#include "deviceplugin/dra/kubelet/pod_devices.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/deviceplugin/dra/decoded_claim.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kPodA = "0f3c9a5e-1b2d-4c3e-9f00-123456789abc";
constexpr const char* kPodB = "1a2b3c4d-1b2d-4c3e-9f00-123456789abc";

DeviceSnapshot snapshot() {
  DeviceSnapshot s;
  NodeDevice d{.name = "pci-0000-81-10-2", .pool = "rdma/vf"};
  d.device.pci = *PciAddress::parse("0000:81:10.2");
  s.devices.push_back(d);
  return s;
}

PreparedClaim claim(const std::string& uid) {
  return {.ref = {.ns = "team", .uid = uid, .name = "c-" + uid},
          .devices = {
              {.request_names = {"nic"}, .pool_name = "node-1", .device_name = "pci-0000-81-10-2"},
              {.request_names = {"nic"}, .pool_name = "node-1", .device_name = "gone"}}};
}

json read(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

TEST(PodDevicesTest, ReservedPodsAreTheCoreGroupsPodsWithValidUids) {
  const json c = {
      {"status",
       {{"reservedFor",
         json::array({{{"resource", "pods"}, {"name", "a"}, {"uid", kPodA}},
                      {{"resource", "pods"}, {"apiGroup", "x.io"}, {"name", "b"}, {"uid", kPodB}},
                      {{"resource", "jobs"}, {"name", "j"}, {"uid", kPodB}},
                      {{"resource", "pods"}, {"name", "b"}, {"uid", "../x"}}})}}}};
  EXPECT_EQ(reservedPods(testing::decodedClaim(c)), std::set<std::string>{kPodA});
  EXPECT_TRUE(reservedPods(testing::decodedClaim(json::object())).empty());
}

TEST(PodDevicesTest, EachPodGetsARecordThatUnprepareRemovesWithTheEmptiedPodDir) {
  sim::TempDir tmp;
  const fs::path dir = tmp.path() / "dra-devices";  // made on first use
  ASSERT_TRUE(writePodDevices(dir, {kPodA, kPodB}, claim("u-1"), snapshot()).ok());
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, claim("u-2"), snapshot()).ok());
  const json rec = read(dir / kPodA / "u-1.json");
  EXPECT_EQ(rec["claim"]["uid"], "u-1");
  ASSERT_EQ(rec["devices"].size(), 1u);  // "gone" is not on the node any more
  EXPECT_EQ(rec["devices"][0]["resourceName"], "rdma/vf");
  EXPECT_EQ(rec["devices"][0]["pciAddress"], "0000:81:10.2");
  EXPECT_EQ(rec["devices"][0]["request"], "nic");
  struct stat st {};
  ASSERT_EQ(::stat((dir / kPodB / "u-1.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  ASSERT_TRUE(removePodDevices(dir, "u-1").ok());
  EXPECT_FALSE(fs::exists(dir / kPodB));  // its only claim
  EXPECT_FALSE(fs::exists(dir / kPodA / "u-1.json"));
  EXPECT_TRUE(fs::exists(dir / kPodA / "u-2.json"));
  EXPECT_TRUE(removePodDevices(dir, "u-1").ok());  // again: nothing to do
  EXPECT_TRUE(removePodDevices(tmp.path() / "missing", "u-1").ok());
}

TEST(PodDevicesTest, TheClaimsShareElseThePoolsVfBandwidthIsEachDevicesMaxTxRate) {
  sim::TempDir tmp;
  const fs::path dir = tmp.path();
  DeviceSnapshot inv = snapshot();
  // Without vfBandwidthMbps (or with the pool gone from the snapshot) the field is absent.
  inv.pools.push_back({.config = {.resource_name = "vf"}});
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, claim("u-plain"), inv).ok());
  EXPECT_FALSE(read(dir / kPodA / "u-plain.json")["devices"][0].contains("maxTxRateMbps"));
  inv.pools.front().config.vf_bandwidth_mbps = 25000;
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, claim("u-share"), inv).ok());
  const json rec = read(dir / kPodA / "u-share.json");
  ASSERT_EQ(rec["devices"].size(), 1u);
  EXPECT_EQ(rec["devices"][0]["maxTxRateMbps"], 25000);
  // What the claim's allocation consumed of the device's bandwidth comes first.
  PreparedClaim granted = claim("u-granted");
  granted.devices[0].max_tx_rate_mbps = 50'000;
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, granted, inv).ok());
  EXPECT_EQ(read(dir / kPodA / "u-granted.json")["devices"][0]["maxTxRateMbps"], 50000);
  inv.pools.front().config.vf_bandwidth_mbps.reset();
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, granted, inv).ok());
  EXPECT_EQ(read(dir / kPodA / "u-granted.json")["devices"][0]["maxTxRateMbps"], 50000);
}

TEST(PodDevicesTest, TheStartSweepKeepsOnlyPreparedClaimsRecords) {
  sim::TempDir tmp;
  const fs::path dir = tmp.path();
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, claim("kept"), snapshot()).ok());
  ASSERT_TRUE(writePodDevices(dir, {kPodA, kPodB}, claim("stale"), snapshot()).ok());
  sweepPodDevices(dir, {"kept"});
  EXPECT_TRUE(fs::exists(dir / kPodA / "kept.json"));
  EXPECT_FALSE(fs::exists(dir / kPodA / "stale.json"));
  EXPECT_FALSE(fs::exists(dir / kPodB));
}

TEST(PodDevicesTest, AdminAccessDevicesAreNeverRecordedForTheCni) {
  sim::TempDir tmp;
  const fs::path dir = tmp.path();
  // The claim's only device on the node is held with admin access: nothing the CNI may attach.
  PreparedClaim admin = claim("u-admin");
  admin.devices[0].admin_access = true;
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, admin, snapshot()).ok());
  EXPECT_FALSE(fs::exists(dir / kPodA / "u-admin.json"));
  // Beside an ordinary result of the same device, only the ordinary one is recorded.
  PreparedClaim both = claim("u-both");
  both.devices.push_back({.request_names = {"mon"},
                          .pool_name = "node-1",
                          .device_name = "pci-0000-81-10-2",
                          .admin_access = true});
  ASSERT_TRUE(writePodDevices(dir, {kPodA}, both, snapshot()).ok());
  const json rec = read(dir / kPodA / "u-both.json");
  ASSERT_EQ(rec["devices"].size(), 1u);
  EXPECT_EQ(rec["devices"][0]["request"], "nic");
}

}  // namespace
}  // namespace rdmanet::dp
