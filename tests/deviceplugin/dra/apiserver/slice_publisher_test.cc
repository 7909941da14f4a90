// The publisher's reconciliation against the stand-in API server: creation, generation rules,
// updates in place, splitting, and what a restart finds.
#include "tests/deviceplugin/dra/apiserver/publisher_fixture.h"

namespace rdmanet::dra {
namespace {

using json = nlohmann::json;

TEST_F(PublisherTest, FirstPublishCreatesOneSliceAtGenerationOne) {
  auto p = publisher();
  auto r = p.publish(inventory(3));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_TRUE(r->changed);
  EXPECT_EQ(r->generation, 1);
  EXPECT_EQ(r->created, 1);
  const auto all = slices();
  ASSERT_EQ(all.size(), 1u);
  const json& s = all[0];
  EXPECT_EQ(s["spec"]["driver"], "rdma.rdmanet.io");
  EXPECT_EQ(s["spec"]["nodeName"], kNode);
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["uid"], node_uid_);
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["kind"], "Node");
  expectPool(1);
  EXPECT_EQ(publishedDevices(), names(inventory(3)));
  EXPECT_EQ(s["spec"]["devices"][0]["attributes"]["resource.kubernetes.io/pciBusID"]["string"],
            "0000:81:00.0");
}

TEST_F(PublisherTest, MoreThan64DevicesGiveSeveralValidSlices) {
  auto p = publisher();
  auto r = p.publish(inventory(130));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->slices, 3u);
  const auto all = slices();
  ASSERT_EQ(all.size(), 3u);
  for (const auto& s : all) EXPECT_LE(s["spec"]["devices"].size(), 64u);
  expectPool(1);
  EXPECT_EQ(publishedDevices(), names(inventory(130)));
}

TEST_F(PublisherTest, UnchangedInventoryWritesNothingAndKeepsTheGeneration) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(70)).ok());
  const int before = writes();
  auto r = p.publish(inventory(70));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(r->generation, 1);
  EXPECT_EQ(writes(), before);
}

TEST_F(PublisherTest, AttributeChangeBumpsTheGenerationAndUpdatesInPlace) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(70)).ok());
  const auto names_before = sliceNames();
  auto inv = inventory(70);
  inv[3].attributes["rdmanet.io/linkType"] = std::string("ethernet");
  auto r = p.publish(inv);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 2);
  EXPECT_EQ(r->updated, 2) << "every slice of the pool moves to the new generation";
  EXPECT_EQ(r->created + r->deleted, 0);
  EXPECT_EQ(sliceNames(), names_before);
  expectPool(2);
}

TEST_F(PublisherTest, TaintChangeBumpsTheGenerationAndTheTaintIsStored) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(4)).ok());
  auto inv = inventory(4);
  inv[1].taints = {{.key = std::string(kUnhealthyTaintKey)}};
  auto r = p.publish(inv);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 2);
  EXPECT_FALSE(r->taints_dropped);
  const auto s = slices().at(0);
  EXPECT_EQ(s["spec"]["devices"][1]["taints"][0]["key"], "rdmanet.io/unhealthy");
  EXPECT_EQ(s["spec"]["devices"][1]["taints"][0]["effect"], "NoSchedule");

  inv[1].taints.clear();  // recovered
  r = p.publish(inv);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->generation, 3);
  EXPECT_FALSE(slices().at(0)["spec"]["devices"][1].contains("taints"));
}

TEST_F(PublisherTest, AnUpdateKeepsTheTimeAddedOfAnUnchangedTaint) {
  auto p = publisher();
  auto inv = inventory(2);
  inv[0].taints = {{.key = std::string(kUnhealthyTaintKey)}};
  ASSERT_TRUE(p.publish(inv).ok());
  const json added = slices().at(0)["spec"]["devices"][0]["taints"][0]["timeAdded"];
  ASSERT_TRUE(added.is_string());
  // Backdate it, as if the taint were old, then change another device.
  auto s = slices().at(0);
  s["spec"]["devices"][0]["taints"][0]["timeAdded"] = "2020-01-01T00:00:00Z";
  ASSERT_TRUE(
      client()
          .update(std::string(kResourceSlicesPath) + "/" + s["metadata"]["name"].get<std::string>(),
                  s)
          .ok());
  inv[1].attributes["rdmanet.io/netdev"] = std::string("ens1f0v1");
  ASSERT_TRUE(p.publish(inv).ok());
  EXPECT_EQ(slices().at(0)["spec"]["devices"][0]["taints"][0]["timeAdded"], "2020-01-01T00:00:00Z");
}

TEST_F(PublisherTest, ShrinkingDeletesOnlySlicesLeftEmpty) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(130)).ok());
  const auto before = sliceNames();
  auto r = p.publish(inventory(10));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 2);
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(r->deleted, 2);
  const auto after = sliceNames();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(before.count(*after.begin())) << "the slice holding the devices was updated";
  expectPool(2);
  EXPECT_EQ(publishedDevices(), names(inventory(10)));
}

TEST_F(PublisherTest, GrowingPastASliceAddsOneAndKeepsTheOthers) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(64)).ok());
  const auto before = sliceNames();
  auto r = p.publish(inventory(65));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 2);
  EXPECT_EQ(r->created, 1);
  EXPECT_EQ(r->deleted, 0);
  const auto after = sliceNames();
  EXPECT_EQ(after.size(), 2u);
  EXPECT_TRUE(after.count(*before.begin()));
  expectPool(2);
}

TEST_F(PublisherTest, EmptyInventoryDeletesEverySlice) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(70)).ok());
  auto r = p.publish({});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->deleted, 2);
  EXPECT_TRUE(slices().empty());
}

TEST_F(PublisherTest, RestartWithTheSameInventoryKeepsTheGeneration) {
  {
    auto p = publisher();
    ASSERT_TRUE(p.publish(inventory(70)).ok());
    ASSERT_TRUE(p.publish(inventory(71)).ok());  // generation 2
  }
  const int before = writes();
  auto fresh = publisher();  // a restarted daemon: no memory
  auto r = fresh.publish(inventory(71));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(r->generation, 2);
  EXPECT_EQ(writes(), before);
}

TEST_F(PublisherTest, RestartWithAnotherInventoryLeavesNoStaleSlice) {
  {
    auto p = publisher();
    ASSERT_TRUE(p.publish(inventory(130)).ok());
  }
  auto fresh = publisher();
  auto r = fresh.publish(inventory(5));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 2);
  EXPECT_EQ(slices().size(), 1u);
  EXPECT_EQ(publishedDevices(), names(inventory(5)));
  expectPool(2);
}

TEST_F(PublisherTest, NewGenerationIsAboveAStaleSliceLeftByACrash) {
  // A crash left a slice of a later generation (half-written pool) and one of an old pool name.
  auto stale = buildSlices(inventory(3), {.node_name = kNode, .node_uid = node_uid_}, 9);
  ASSERT_TRUE(stale.ok());
  ASSERT_TRUE(client().create(kResourceSlicesPath, (*stale)[0]).ok());
  json other = (*stale)[0];
  other["spec"]["pool"]["name"] = "node-1-old";
  other["spec"]["pool"]["generation"] = 4;
  ASSERT_TRUE(client().create(kResourceSlicesPath, other).ok());

  auto p = publisher();
  auto r = p.publish(inventory(70));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 10);
  EXPECT_EQ(slices().size(), 2u);
  expectPool(10);
  EXPECT_EQ(publishedDevices(), names(inventory(70)));
}

TEST_F(PublisherTest, SlicesOfOtherNodesAndDriversAreLeftAlone) {
  server_.createNode("node-2");
  auto other_node = buildSlices(inventory(2), {.node_name = "node-2"}, 1);
  auto other_driver =
      buildSlices(inventory(2), {.driver = "gpu.nvidia.com", .node_name = kNode}, 1);
  ASSERT_TRUE(other_node.ok() && other_driver.ok());
  ASSERT_TRUE(client().create(kResourceSlicesPath, (*other_node)[0]).ok());
  ASSERT_TRUE(client().create(kResourceSlicesPath, (*other_driver)[0]).ok());
  auto p = publisher();
  ASSERT_TRUE(p.publish({}).ok());
  auto all = client().list(kResourceSlicesPath);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)["items"].size(), 2u);
  ASSERT_TRUE(p.unpublishAll().ok());
  all = client().list(kResourceSlicesPath);
  EXPECT_EQ((*all)["items"].size(), 2u);
}

TEST_F(PublisherTest, UnpublishAllDeletesThisNodesSlices) {
  auto p = publisher();
  ASSERT_TRUE(p.publish(inventory(130)).ok());
  ASSERT_TRUE(p.unpublishAll().ok());
  EXPECT_TRUE(slices().empty());
}

}  // namespace
}  // namespace rdmanet::dra
