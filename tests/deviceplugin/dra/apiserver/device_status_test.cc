// The entries of a claim's status.devices that carry the CNI's network report
// (deviceplugin/dra/apiserver/device_status.h), in resource.k8s.io/v1 AllocatedDeviceStatus's
// wire format: built, and merged so that only ours change.
#include "deviceplugin/dra/apiserver/device_status.h"

#include <gtest/gtest.h>

#include "tests/deviceplugin/dra/decoded_claim.h"

namespace rdmanet::dra {
namespace {

using nlohmann::json;

constexpr const char* kDriver = "rdma.rdmanet.io";
constexpr const char* kNow = "2026-12-06T12:00:00Z";

NetReport ready() {
  return {.container_id = "c1",
          .interface_name = "eth1",
          .ips = {"10.0.0.5/24"},
          .hardware_address = "02:00:00:aa:00:01"};
}

json claimWith(const json& results, const json& devices) {
  json c = {{"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
  if (!devices.is_null()) c["status"]["devices"] = devices;
  return c;
}
json result(const std::string& device, const std::string& driver = kDriver,
            const std::string& pool = "node-a") {
  return {{"request", "nic"}, {"driver", driver}, {"pool", pool}, {"device", device}};
}
json foreign() {
  return {{"driver", "gpu.example.com"},
          {"pool", "node-a"},
          {"device", "gpu-0"},
          {"data", {{"anything", 1}}}};
}

TEST(DeviceStatus, AReadyEntryCarriesNetworkDataAndAReadyTrueCondition) {
  const json e = deviceStatusEntry(kDriver, "node-a", "vf-1", "", ready(), nullptr, kNow);
  EXPECT_EQ(e, json::parse(R"({
    "driver": "rdma.rdmanet.io", "pool": "node-a", "device": "vf-1",
    "conditions": [{"type": "Ready", "status": "True", "reason": "InterfaceReady",
                    "message": "eth1 is configured in the pod's network namespace",
                    "lastTransitionTime": "2026-12-06T12:00:00Z"}],
    "networkData": {"interfaceName": "eth1", "ips": ["10.0.0.5/24"],
                    "hardwareAddress": "02:00:00:aa:00:01"}})"));
}

TEST(DeviceStatus, AFailedAddGivesReadyFalseWithAReasonForItsCodeAndNoNetworkData) {
  const NetReport failed{.container_id = "c1",
                         .interface_name = "eth1",
                         .error_code = 101,
                         .error_message = "RTM_NEWLINK: EBUSY"};
  const json e = deviceStatusEntry(kDriver, "node-a", "vf-1", "share-1", failed, nullptr, kNow);
  EXPECT_FALSE(e.contains("networkData"));
  EXPECT_EQ(e["shareID"], "share-1");
  EXPECT_EQ(e["conditions"][0]["status"], "False");
  EXPECT_EQ(e["conditions"][0]["reason"], "NetlinkFailure");
  EXPECT_EQ(e["conditions"][0]["message"],
            "CNI ADD of eth1 failed (error 101): RTM_NEWLINK: EBUSY");
  EXPECT_EQ(failureReason(7), "InvalidConfiguration");
  EXPECT_EQ(failureReason(11), "DeviceBusy");
  EXPECT_EQ(failureReason(42), "AddFailed");  // an IPAM delegate's own code
}

TEST(DeviceStatus, TheTransitionTimeIsKeptWhileTheStatusStaysTheSame) {
  const json old =
      deviceStatusEntry(kDriver, "node-a", "vf-1", "", ready(), nullptr, "2026-01-01T00:00:00Z");
  NetReport moved = ready();
  moved.ips = {"10.0.0.6/24"};
  json e = deviceStatusEntry(kDriver, "node-a", "vf-1", "", moved, &old, kNow);
  EXPECT_EQ(e["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
  const NetReport failed{.container_id = "c1", .interface_name = "eth1", .error_code = 7};
  e = deviceStatusEntry(kDriver, "node-a", "vf-1", "", failed, &old, kNow);
  EXPECT_EQ(e["conditions"][0]["lastTransitionTime"], kNow);
}

TEST(DeviceStatus, MergeWritesOursInPlaceAndLeavesEveryOtherEntryAsItWas) {
  const json other_pool = {{"driver", kDriver}, {"pool", "node-b"}, {"device", "vf-1"}};
  const json stale_ours = {{"driver", kDriver}, {"pool", "node-a"}, {"device", "vf-1"}};
  const json claim =
      claimWith(json::array({result("vf-1"), result("vf-2"), result("gpu-0", "gpu.example.com")}),
                json::array({foreign(), stale_ours, other_pool}));
  const dp::OwnedDevices owned{.pool = "node-a", .devices = {"vf-1", "vf-2"}};
  const json out = mergeDeviceStatuses(dp::testing::decodedClaim(claim), kDriver, owned,
                                       {{"vf-1", ready()}}, kNow);
  ASSERT_EQ(out.size(), 3u) << out.dump();
  EXPECT_EQ(out[0], foreign());
  EXPECT_EQ(out[1], deviceStatusEntry(kDriver, "node-a", "vf-1", "", ready(), nullptr, kNow));
  EXPECT_EQ(out[2], other_pool);
  // A new report is appended; a device without one has no entry.
  const json out2 =
      mergeDeviceStatuses(dp::testing::decodedClaim(
                              claimWith(claim["status"]["allocation"]["devices"]["results"], out)),
                          kDriver, owned, {{"vf-2", ready()}}, kNow);
  ASSERT_EQ(out2.size(), 3u) << out2.dump();
  EXPECT_EQ(out2[0], foreign());
  EXPECT_EQ(out2[1], other_pool);
  EXPECT_EQ(out2[2]["device"], "vf-2");
}

TEST(DeviceStatus, MergeWritesOnlyForDevicesAllocatedToUsInTheClaim) {
  // A report of a device we prepared but the allocation no longer lists (reallocated), and one
  // the claim has under another driver's name: no entry for either.
  const json claim = claimWith(json::array({result("vf-9", "gpu.example.com")}), nullptr);
  const dp::OwnedDevices owned{.pool = "node-a", .devices = {"vf-1", "vf-9"}};
  const json out = mergeDeviceStatuses(dp::testing::decodedClaim(claim), kDriver, owned,
                                       {{"vf-1", ready()}, {"vf-9", ready()}}, kNow);
  EXPECT_EQ(out, json::array());
  // A shared device gets an entry per allocation of it, each with its shareID.
  json shared = claimWith(json::array({result("vf-1"), result("vf-1")}), nullptr);
  shared["status"]["allocation"]["devices"]["results"][0]["shareID"] = "a";
  shared["status"]["allocation"]["devices"]["results"][1]["shareID"] = "b";
  const json both = mergeDeviceStatuses(dp::testing::decodedClaim(shared), kDriver, owned,
                                        {{"vf-1", ready()}}, kNow);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0]["shareID"], "a");
  EXPECT_EQ(both[1]["shareID"], "b");
}

}  // namespace
}  // namespace rdmanet::dra
