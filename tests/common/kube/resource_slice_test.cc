// The typed view of a ResourceSlice list (common/kube/resource_slice.h): slices as the API
// server lists them decode to their fields; a wrong type or missing required key is error 7
// naming the key's path, and a list skips (and says why) the items it cannot read.
#include "common/kube/resource_slice.h"

#include <gtest/gtest.h>

namespace rdmanet::kube {
namespace {

using nlohmann::json;

json slice(const std::string& name) {
  return {
      {"metadata",
       {{"name", name},
        {"uid", "u-" + name},
        {"ownerReferences",
         json::array({{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}, {"uid", "9"}}})}}},
      {"spec",
       {{"driver", "rdma.rdmanet.io"},
        {"nodeName", "n1"},
        {"pool", {{"name", "n1"}, {"generation", 3}, {"resourceSliceCount", 2}}},
        {"devices", json::array({{{"name", "pci-0000-17-00-2"}, {"attributes", json::object()}},
                                 {{"name", "pci-0000-17-00-3"}}})}}}};
}

TEST(ResourceSliceViewTest, AListDecodesToItsSlicesFields) {
  const json list = {{"items", json::array({slice("a"), slice("b")})}};
  auto l = decodeResourceSliceList(list);
  ASSERT_TRUE(l.ok()) << l.error().msg;
  ASSERT_EQ(l->items.size(), 2u);
  EXPECT_TRUE(l->skipped.empty());
  const ResourceSlice& s = l->items[1];
  EXPECT_EQ(s.metadata.name, "b");
  EXPECT_EQ(s.metadata.uid, "u-b");
  ASSERT_EQ(s.metadata.owner_references.size(), 1u);
  EXPECT_EQ(s.metadata.owner_references[0].kind, "Node");
  EXPECT_EQ(s.driver, "rdma.rdmanet.io");
  EXPECT_EQ(s.node_name, "n1");
  EXPECT_EQ(s.pool.name, "n1");
  EXPECT_EQ(s.pool.generation, 3);
  EXPECT_EQ(s.pool.resource_slice_count, 2);
  EXPECT_EQ(s.device_names, (std::vector<std::string>{"pci-0000-17-00-2", "pci-0000-17-00-3"}));
  ASSERT_NE(s.devices, nullptr);
  EXPECT_EQ(*s.devices, list["items"][1]["spec"]["devices"]);  // whole, for comparing
  EXPECT_EQ(s.raw, &list["items"][1]);
}

TEST(ResourceSliceViewTest, NoItemsAndNoDevicesAreEmpty) {
  auto l = decodeResourceSliceList(json::object());
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->items.empty());
  json s = slice("a");
  s["spec"].erase("devices");
  s["spec"].erase("nodeName");
  auto v = decodeResourceSlice(s, "items[0]");
  ASSERT_TRUE(v.ok()) << v.error().msg;
  EXPECT_TRUE(v->device_names.empty());
  ASSERT_NE(v->devices, nullptr);
  EXPECT_EQ(*v->devices, json::array());
  EXPECT_EQ(v->node_name, "");
  EXPECT_TRUE(v->counter_set_names.empty());
  ASSERT_NE(v->shared_counters, nullptr);
  EXPECT_EQ(*v->shared_counters, json::array());
}

// KEP-4815: a slice of a pool's counter sets holds no devices.
TEST(ResourceSliceViewTest, ACounterSetSliceDecodesItsSetNames) {
  json s = slice("c");
  s["spec"].erase("devices");
  s["spec"]["sharedCounters"] = json::array(
      {{{"name", "pci-0000-17-00-0"}, {"counters", {{"bandwidth", {{"value", "100G"}}}}}},
       {{"name", "pci-0000-17-00-1"}, {"counters", {{"bandwidth", {{"value", "25G"}}}}}}});
  auto v = decodeResourceSlice(s, "items[0]");
  ASSERT_TRUE(v.ok()) << v.error().msg;
  EXPECT_TRUE(v->device_names.empty());
  EXPECT_EQ(v->counter_set_names,
            (std::vector<std::string>{"pci-0000-17-00-0", "pci-0000-17-00-1"}));
  EXPECT_EQ(*v->shared_counters, s["spec"]["sharedCounters"]);
}

TEST(ResourceSliceViewTest, EachWrongTypeOrMissingKeyIsError7NamingItsPath) {
  struct Case {
    json::json_pointer at;
    json value;  // null: the key is removed
    std::string msg;
  };
  const Case cases[] = {
      {json::json_pointer("/metadata/name"), 1, "\"items[1].metadata.name\" must be a string"},
      {json::json_pointer("/metadata/ownerReferences/0/uid"), nullptr,
       "\"items[1].metadata.ownerReferences[0].uid\" is required"},
      {json::json_pointer("/spec"), nullptr, "\"items[1].spec\" is required"},
      {json::json_pointer("/spec"), "x", "\"items[1].spec\" must be an object"},
      {json::json_pointer("/spec/driver"), nullptr, "\"items[1].spec.driver\" is required"},
      {json::json_pointer("/spec/nodeName"), true, "\"items[1].spec.nodeName\" must be a string"},
      {json::json_pointer("/spec/pool"), nullptr, "\"items[1].spec.pool\" is required"},
      {json::json_pointer("/spec/pool/name"), 5, "\"items[1].spec.pool.name\" must be a string"},
      {json::json_pointer("/spec/pool/generation"), nullptr,
       "\"items[1].spec.pool.generation\" is required"},
      {json::json_pointer("/spec/pool/generation"), 1.5,
       "\"items[1].spec.pool.generation\" must be an integer"},
      {json::json_pointer("/spec/pool/generation"), -1,
       "\"items[1].spec.pool.generation\" is -1, out of range 0..9223372036854775807"},
      {json::json_pointer("/spec/pool/resourceSliceCount"), "2",
       "\"items[1].spec.pool.resourceSliceCount\" must be an integer"},
      {json::json_pointer("/spec/devices"), json::object(),
       "\"items[1].spec.devices\" must be an array"},
      {json::json_pointer("/spec/devices/1"), "x",
       "\"items[1].spec.devices[1]\" must be an object"},
      {json::json_pointer("/spec/devices/0/name"), nullptr,
       "\"items[1].spec.devices[0].name\" is required"},
      {json::json_pointer("/spec/sharedCounters"), "x",
       "\"items[1].spec.sharedCounters\" must be an array"},
      {json::json_pointer("/spec/sharedCounters"), json::array({7}),
       "\"items[1].spec.sharedCounters[0]\" must be an object"},
      {json::json_pointer("/spec/sharedCounters"), json::array({json::object()}),
       "\"items[1].spec.sharedCounters[0].name\" is required"},
  };
  for (const Case& c : cases) {
    json bad = slice("b");
    if (c.value.is_null()) {
      bad[c.at.parent_pointer()].erase(c.at.back());
    } else {
      bad[c.at] = c.value;
    }
    // The list keeps the good item and names what is wrong with the bad one.
    auto l = decodeResourceSliceList({{"items", json::array({slice("a"), bad})}});
    ASSERT_TRUE(l.ok()) << c.at.to_string();
    ASSERT_EQ(l->items.size(), 1u) << c.at.to_string();
    EXPECT_EQ(l->items[0].metadata.name, "a");
    ASSERT_EQ(l->skipped.size(), 1u) << c.at.to_string();
    EXPECT_EQ(l->skipped[0].code, ErrorCode::kInvalidConfig) << c.at.to_string();
    EXPECT_EQ(l->skipped[0].msg, c.msg) << c.at.to_string();
  }
  for (const auto& [doc, msg] : std::vector<std::pair<json, std::string>>{
           {json::array(), "\"ResourceSliceList\" must be an object"},
           {json{{"items", "x"}}, "\"items\" must be an array"}}) {
    auto l = decodeResourceSliceList(doc);
    ASSERT_FALSE(l.ok()) << msg;
    EXPECT_EQ(l.error().code, ErrorCode::kInvalidConfig);
    EXPECT_EQ(l.error().msg, msg);
  }
}

}  // namespace
}  // namespace rdmanet::kube
