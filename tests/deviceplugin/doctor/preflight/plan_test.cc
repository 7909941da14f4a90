// Node selection, pair planning and the NAD's MTU (deviceplugin/doctor/preflight/plan.h).
#include "deviceplugin/doctor/preflight/plan.h"

#include <gtest/gtest.h>

namespace rdmanet::doctor::preflight {
namespace {

using json = nlohmann::json;

json node(const std::string& name, json allocatable) {
  return {{"metadata", {{"name", name}}}, {"status", {{"allocatable", allocatable}}}};
}

TEST(PlanTest, NodesWithResourceAreThoseWithAnAllocatableAboveZero) {
  const json list = {{"kind", "NodeList"},
                     {"items",
                      {node("vm2", {{"rdma/vf", "4"}}), node("vm1", {{"rdma/vf", "1k"}}),
                       node("vm3", {{"rdma/vf", "0"}}), node("cp", {{"cpu", "4"}}),
                       node("bad", {{"rdma/vf", "many"}}), node("other", {{"rdma/hca", "2"}})}}};
  auto nodes = nodesWithResource(list, "rdma/vf");
  ASSERT_TRUE(nodes.ok()) << nodes.error().msg;
  EXPECT_EQ(*nodes, (std::vector<std::string>{"vm1", "vm2"}));
  EXPECT_FALSE(nodesWithResource(json::object({{"items", 3}}), "rdma/vf").ok());
}

json slice(const std::string& name, const std::string& node, const std::string& driver,
           int devices) {
  json d = json::array();
  for (int i = 0; i < devices; ++i) d.push_back({{"name", "vf-" + std::to_string(i)}});
  return {{"metadata", {{"name", name}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", d}}}};
}

TEST(PlanTest, NodesWithSlicesAreThoseWithDevicesOfTheDriver) {
  const json list = {
      {"items",
       {slice("s1", "vm2", "rdma.rdmanet.io", 2), slice("s2", "vm1", "rdma.rdmanet.io", 1),
        slice("s3", "vm1", "rdma.rdmanet.io", 3), slice("s4", "vm3", "gpu.example.com", 1),
        slice("s5", "vm4", "rdma.rdmanet.io", 0)}}};
  auto nodes = nodesWithSlices(list, "rdma.rdmanet.io");
  ASSERT_TRUE(nodes.ok()) << nodes.error().msg;
  EXPECT_EQ(*nodes, (std::vector<std::string>{"vm1", "vm2"}));
}

TEST(PlanTest, TwoNodesGiveBothDirections) {
  const std::vector<NodePair> want = {{"a", "b"}, {"b", "a"}};
  EXPECT_EQ(planPairs({"a", "b"}, PairMode::kAuto), want);
  EXPECT_EQ(planPairs({"a", "b"}, PairMode::kAll), want);
  EXPECT_EQ(planPairs({"a", "b"}, PairMode::kRing), want);
  EXPECT_TRUE(planPairs({"a"}, PairMode::kAll).empty());
}

TEST(PlanTest, AllPairsUpToEightNodesThenTheRing) {
  EXPECT_EQ(planPairs({"a", "b", "c"}, PairMode::kAuto),
            (std::vector<NodePair>{
                {"a", "b"}, {"a", "c"}, {"b", "a"}, {"b", "c"}, {"c", "a"}, {"c", "b"}}));
  EXPECT_EQ(planPairs({"a", "b", "c"}, PairMode::kRing),
            (std::vector<NodePair>{{"a", "b"}, {"b", "c"}, {"c", "a"}}));
  std::vector<std::string> eight, nine;
  for (int i = 0; i < 9; ++i) (i < 8 ? eight : nine).push_back("n" + std::to_string(i));
  nine.insert(nine.begin(), eight.begin(), eight.end());
  EXPECT_EQ(planPairs(eight, PairMode::kAuto).size(), 56u);
  const auto ring = planPairs(nine, PairMode::kAuto);
  ASSERT_EQ(ring.size(), 9u);
  EXPECT_EQ(ring.back(), (NodePair{"n8", "n0"}));
  EXPECT_EQ(planPairs(nine, PairMode::kAll).size(), 72u);
}

TEST(PlanTest, ServerNodesAreThePairsTargetsOnce) {
  EXPECT_EQ(serverNodes({"a", "b", "c"}, {{"a", "b"}, {"c", "b"}, {"b", "a"}}),
            (std::vector<std::string>{"a", "b"}));
}

json nad(const std::string& config) { return {{"spec", {{"config", config}}}}; }

TEST(PlanTest, NadMtuIsTheConfigsOrItsFirstPluginsWhoHasOne) {
  EXPECT_EQ(*nadMtu(nad(R"({"cniVersion":"1.0.0","type":"rdmanet","mtu":1500})")), 1500);
  EXPECT_EQ(*nadMtu(nad(R"({"plugins":[{"type":"rdmanet"},{"type":"tuning","mtu":9000}]})")), 9000);
  EXPECT_FALSE(nadMtu(nad(R"({"type":"rdmanet"})"))->has_value());
  EXPECT_EQ(nadMtu(nad(R"({"mtu":"1500"})")).error().msg, "\"mtu\" must be an integer");
  EXPECT_EQ(nadMtu(nad("not json")).error().msg,
            "\"spec.config\" must be a CNI config (a JSON object)");
  EXPECT_EQ(nadMtu(json::object()).error().msg,
            "\"spec.config\" must be a CNI config (a JSON string)");
}

}  // namespace
}  // namespace rdmanet::doctor::preflight
