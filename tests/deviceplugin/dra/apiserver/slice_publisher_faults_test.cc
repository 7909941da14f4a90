// The publisher when the API server misbehaves: 409s, 500s, time-outs, invalid devices, a
// missing Node, and a server that drops device taints (DRADeviceTaints off).
#include "common/kube/api_error.h"
#include "tests/deviceplugin/dra/apiserver/publisher_fixture.h"

namespace rdmanet::dra {
namespace {

using json = nlohmann::json;

TEST_F(PublisherTest, ConflictOnUpdateIsRetriedAfterReReading) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(70)).ok());
  server_.fail("PUT", kResourceSlicesPath, 409);
  auto r = p.publish(inventory(71));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->conflicts, 1);
  EXPECT_EQ(r->generation, 2) << "the retry keeps the generation it chose";
  expectPool(2);
  EXPECT_EQ(publishedDevices(), names(inventory(71)));
}

TEST_F(PublisherTest, SomeoneElsesWriteBetweenListAndUpdateIsAConflictThatHeals) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(3)).ok());
  // Another writer (an admin's kubectl label) changes the slice: our stored copy is now stale
  // on the server side, and our next update must not overwrite theirs blindly.
  auto s = slices().at(0);
  s["metadata"]["labels"]["touched"] = "yes";
  ASSERT_TRUE(
      client()
          .update(std::string(kResourceSlicesPath) + "/" + s["metadata"]["name"].get<std::string>(),
                  s)
          .ok());
  auto r = p.publish(inventory(4));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  const auto after = slices().at(0);
  EXPECT_EQ(after["metadata"]["labels"]["touched"], "yes") << "their change survived";
  EXPECT_EQ(after["spec"]["devices"].size(), 4u);
}

TEST_F(PublisherTest, EndlessConflictsGiveUpWithAConflictError) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(3)).ok());
  server_.fail("PUT", kResourceSlicesPath, 409, 100);
  auto r = p.publish(inventory(4));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::isConflict(r.error())) << r.error().msg;
}

TEST_F(PublisherTest, ServerErrorHalfWayFailsThePublishAndTheNextOneRepairs) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(70)).ok());
  // The slice holding devices 64.. (pci-0000-81-08-0 on) fails to update, on every try, after
  // the first slice already moved to generation 2.
  std::string second;
  for (const auto& s : slices()) {
    if (s["spec"]["devices"][0]["name"] == "pci-0000-81-08-0") second = s["metadata"]["name"];
  }
  ASSERT_FALSE(second.empty());
  server_.fail("PUT", std::string(kResourceSlicesPath) + "/" + second, 500, 2);
  auto r = p.publish(inventory(72));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::isServerError(r.error())) << r.error().msg;

  r = p.publish(inventory(72));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 3) << "above the half-written generation 2";
  expectPool(3);
  EXPECT_EQ(publishedDevices(), names(inventory(72)));
}

TEST_F(PublisherTest, CreateFailureLeavesNothingAPublishCannotFix) {
  auto p = publisher();
  server_.fail("POST", kResourceSlicesPath, 500, 1);
  auto r = p.publish(inventory(130));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::isServerError(r.error()));
  r = p.publish(inventory(130));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(slices().size(), 3u);
  EXPECT_EQ(publishedDevices(), names(inventory(130)));
  expectPool(r->generation);
}

TEST_F(PublisherTest, TimeOutsAreSurvived) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(3)).ok());
  // The list hangs past the client's time-out on every try of this publish.
  server_.hang("GET", kResourceSlicesPath, 3000, 2);
  auto r = p.publish(inventory(4));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::isNoAnswer(r.error())) << r.error().msg;
  r = p.publish(inventory(4));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(publishedDevices(), names(inventory(4)));
}

TEST_F(PublisherTest, InvalidDevicesSendNothing) {
  auto p = publisher();
  auto inv = inventory(3);
  for (int i = 0; i < 29; ++i) inv[2].attributes["rdmanet.io/x" + std::to_string(i)] = true;
  auto r = p.publish(inv);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(r.error().msg.find("33 attributes"), std::string::npos) << r.error().msg;
  EXPECT_EQ(server_.stats()["requests"].value("GET", 0), 0);
  EXPECT_EQ(writes(), 1) << "only the fixture's Node";
}

TEST_F(PublisherTest, MissingNodeIsNotFound) {
  auto p = SlicePublisher(client(), {.node_name = "node-9"});
  auto r = p.publish(inventory(1));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::isNotFound(r.error()));
  EXPECT_NE(r.error().msg.find("looking up Node node-9"), std::string::npos) << r.error().msg;
}

TEST_F(PublisherTest, DroppedTaintsAreNoticedAndDoNotChurn) {
  server_.setGate(std::string(kDeviceTaintsGate), false);
  auto p = publisher();
  auto inv = inventory(3);
  inv[0].taints = {{.key = std::string(kUnhealthyTaintKey)}};
  auto r = p.publish(inv);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_TRUE(r->taints_dropped);
  EXPECT_TRUE(p.taintsDropped());
  EXPECT_FALSE(slices().at(0)["spec"]["devices"][0].contains("taints"));

  const int before = writes();
  r = p.publish(inv);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed) << "the missing taint is not a difference to fix forever";
  EXPECT_EQ(writes(), before);

  // A restarted daemon learns it again, once.
  auto fresh = publisher();
  r = fresh.publish(inv);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->taints_dropped);
  r = fresh.publish(inv);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed);

  // The gate is turned on; the next taint change is written and comes back.
  server_.setGate(std::string(kDeviceTaintsGate), true);
  inv[1].taints = {{.key = std::string(kUnhealthyTaintKey)}};
  r = fresh.publish(inv);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->taints_dropped);
  EXPECT_TRUE(slices().at(0)["spec"]["devices"][1].contains("taints"));
}

TEST_F(PublisherTest, DroppedAllowMultipleAllocationsIsNoticedAndDoesNotChurn) {
  server_.setGate(std::string(kConsumableCapacityGate), false);
  auto p = publisher();
  auto inv = inventory(2);
  inv[0].allow_multiple_allocations = true;  // a shared pool's PF
  // Its link as consumable capacity, of which a claim takes 40G unless it asks otherwise: the
  // request policy is gated with allowMultipleAllocations.
  inv[0].capacity["rdmanet.io/bandwidth"] = DeviceCapacity("100G", "40G");
  auto r = p.publish(inv);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_TRUE(r->multiple_allocations_dropped);
  EXPECT_FALSE(r->taints_dropped);
  const int before = writes();
  r = p.publish(inv);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(writes(), before);

  server_.setGate(std::string(kConsumableCapacityGate), true);
  auto fresh = publisher();
  r = fresh.publish(inv);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->multiple_allocations_dropped);
  EXPECT_TRUE(slices().at(0)["spec"]["devices"][0].value("allowMultipleAllocations", false));
  EXPECT_EQ(slices().at(0)["spec"]["devices"][0]["capacity"]["rdmanet.io/bandwidth"],
            json::parse(R"({"value": "100G", "requestPolicy": {"default": "40G"}})"));
  const int quiet = writes();
  ASSERT_TRUE(fresh.publish(inv).ok());
  EXPECT_EQ(writes(), quiet) << "the stored request policy reads back as written";
}

TEST_F(PublisherTest, With65TaintedDevicesTheServerWouldRefuseOneSliceButWeSplit) {
  // Direct proof that the stand-in enforces the limit we split for...
  auto inv = inventory(65);
  for (auto& d : inv) d.taints = {{.key = std::string(kUnhealthyTaintKey)}};
  json one = sliceObject({.node_name = kNode}, "devices", json::array(), 1, 1);
  for (const auto& d : inv) one["spec"]["devices"].push_back(deviceJson(d));
  auto refused = client().create(kResourceSlicesPath, one);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(kube::isInvalid(refused.error()));
  EXPECT_NE(refused.error().msg.find("must have at most 64 items"), std::string::npos)
      << refused.error().msg;
  // ...and 128 untainted devices in one slice pass, 129 do not.
  json big = sliceObject({.node_name = kNode}, "devices", json::array(), 1, 1);
  for (const auto& d : inventory(129)) big["spec"]["devices"].push_back(deviceJson(d));
  auto r129 = client().create(kResourceSlicesPath, big);
  ASSERT_FALSE(r129.ok());
  EXPECT_NE(r129.error().msg.find("must have at most 128 items"), std::string::npos);
  big["spec"]["devices"].erase(big["spec"]["devices"].size() - 1);
  EXPECT_TRUE(client().create(kResourceSlicesPath, big).ok());
  ASSERT_TRUE(client()
                  .remove(std::string(kResourceSlicesPath) + "/" +
                          slices().at(0)["metadata"]["name"].get<std::string>())
                  .ok());

  auto p = publisher();
  auto r = p.publish(inv);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->slices, 2u);
}

}  // namespace
}  // namespace rdmanet::dra
