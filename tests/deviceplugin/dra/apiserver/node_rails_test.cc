// The node's rail labels and annotation (node_rails.h): the summary of a snapshot, the labels it
// owns and leaves, and the write through the stand-in API server (a 409 re-read, nothing
// written when nothing changed).
#include "deviceplugin/dra/apiserver/node_rails.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "deviceplugin/dra/apiserver/api_paths.h"
#include "tests/fakes/fake_apiserver.h"

namespace rdmanet::dp {
namespace {

using nlohmann::json;

NodeDevice device(std::string name, std::string pf_netdev, std::string rail, bool vf = true) {
  NodeDevice d;
  d.name = std::move(name);
  if (vf) {
    d.device.pf = PciAddress{};
    d.device.pf_netdev = std::move(pf_netdev);
  } else {
    d.device.netdev = std::move(pf_netdev);
  }
  d.device.rail = std::move(rail);
  return d;
}

TEST(NodeRailsTest, TheSummaryNamesEachRailsPorts) {
  DeviceSnapshot snap;
  snap.devices = {device("a", "ens1f0", "leaf-1"), device("b", "ens1f0", "leaf-1"),
                  device("c", "ens2f0", "leaf-1"), device("d", "ens1f1", "leaf-2"),
                  device("e", "ens2f1", ""),       device("f", "ens1f1", "leaf-2", false)};
  RailSummary want = {{"leaf-1", {"ens1f0", "ens2f0"}}, {"leaf-2", {"ens1f1"}}};
  EXPECT_EQ(railSummary(snap), want);
}

TEST(NodeRailsTest, OurLabelsFollowTheSummaryAndOthersStay) {
  json node = {{"metadata",
                {{"name", "n1"},
                 {"labels", {{"kubernetes.io/hostname", "n1"}, {"rail.rdmanet.io/old", "1"}}},
                 {"annotations", {{"other", "x"}}}}},
               {"spec", {{"unschedulable", false}}}};
  const json before = node;
  EXPECT_TRUE(applyRailSummary(node, {{"leaf-1", {"ens1f0", "ens2f0"}}}));
  const json& labels = node["metadata"]["labels"];
  EXPECT_EQ(labels, (json{{"kubernetes.io/hostname", "n1"}, {"rail.rdmanet.io/leaf-1", "2"}}));
  EXPECT_EQ(node["metadata"]["annotations"]["other"], "x");
  EXPECT_EQ(json::parse(node["metadata"]["annotations"]["rdmanet.io/rails"].get<std::string>()),
            (json{{"leaf-1", {"ens1f0", "ens2f0"}}}));
  EXPECT_EQ(node["spec"], before["spec"]);
  EXPECT_FALSE(applyRailSummary(node, {{"leaf-1", {"ens1f0", "ens2f0"}}}));  // no change
  // No rails: ours are removed, the rest stays.
  EXPECT_TRUE(applyRailSummary(node, {}));
  EXPECT_EQ(node["metadata"]["labels"], (json{{"kubernetes.io/hostname", "n1"}}));
  EXPECT_EQ(node["metadata"]["annotations"], (json{{"other", "x"}}));
  json bare = {{"metadata", {{"name", "n2"}}}};
  EXPECT_FALSE(applyRailSummary(bare, {}));
}

TEST(NodeRailsTest, WrittenThroughTheApiServerAgainAfterAConflict) {
  rdmanet::testing::FakeApiServer api;
  if (!api.ok()) GTEST_SKIP() << api.error();
  api.createNode("node-r");
  kube::KubeClient client(api.config());
  const std::string path = *dra::nodePath("node-r");
  api.fail("PUT", path, 409);
  auto st = writeNodeRails(client, "node-r", {{"leaf-7", {"ens1f0"}}});
  ASSERT_TRUE(st.ok()) << st.error().msg;
  auto node = client.get(path);
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)["metadata"]["labels"]["rail.rdmanet.io/leaf-7"], "1");
  const std::string rv = (*node)["metadata"]["resourceVersion"];
  // Unchanged: no write (the resourceVersion stays).
  ASSERT_TRUE(writeNodeRails(client, "node-r", {{"leaf-7", {"ens1f0"}}}).ok());
  EXPECT_EQ((*client.get(path))["metadata"]["resourceVersion"], rv);
  // A node that is not there, and a name that is not one: errors, nothing written.
  auto missing = writeNodeRails(client, "node-x", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().http_status, 404);
  auto bad = writeNodeRails(client, "../x", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidConfig);
}

}  // namespace
}  // namespace rdmanet::dp
