#include "deviceplugin/dra/apiserver/slice_builder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace rdmanet::dra {
namespace {

using json = nlohmann::json;

std::vector<DraDevice> devices(int n) {
  std::vector<DraDevice> out;
  for (int i = n - 1; i >= 0; --i) {  // reverse order: the builder sorts
    DraDevice d;
    d.name = fmt::format("pci-0000-{:02x}-{:02x}-{:x}", 0x81 + i / 256, (i / 8) % 32, i % 8);
    d.attributes["rdmanet.io/vfIndex"] = int64_t{i};
    out.push_back(std::move(d));
  }
  return out;
}

SliceOwner owner() {
  return {.driver = "rdma.rdmanet.io", .node_name = "node-1", .node_uid = "u1"};
}

TEST(SliceBuilderTest, OneSliceHoldsTheWholeSmallPool) {
  auto slices = buildSlices(devices(3), owner(), 7);
  ASSERT_TRUE(slices.ok()) << slices.error().msg;
  ASSERT_EQ(slices->size(), 1u);
  const json& s = (*slices)[0];
  EXPECT_EQ(s["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(s["kind"], "ResourceSlice");
  EXPECT_EQ(s["metadata"]["generateName"], "node-1-rdma-rdmanet-io-");
  EXPECT_EQ(s["metadata"]["ownerReferences"][0], json({{"apiVersion", "v1"},
                                                       {"kind", "Node"},
                                                       {"name", "node-1"},
                                                       {"uid", "u1"},
                                                       {"controller", true}}));
  EXPECT_EQ(s["spec"]["driver"], "rdma.rdmanet.io");
  EXPECT_EQ(s["spec"]["nodeName"], "node-1");
  EXPECT_EQ(s["spec"]["pool"],
            json({{"name", "node-1"}, {"generation", 7}, {"resourceSliceCount", 1}}));
  ASSERT_EQ(s["spec"]["devices"].size(), 3u);
  EXPECT_EQ(s["spec"]["devices"][0]["name"], "pci-0000-81-00-0") << "sorted by name";
  EXPECT_EQ(s["spec"]["devices"][0]["attributes"]["rdmanet.io/vfIndex"], json({{"int", 0}}));
}

TEST(SliceBuilderTest, MoreThan64DevicesAreSplitIntoFullSlicesInNameOrder) {
  auto slices = buildSlices(devices(130), owner(), 1);
  ASSERT_TRUE(slices.ok());
  ASSERT_EQ(slices->size(), 3u);
  EXPECT_EQ((*slices)[0]["spec"]["devices"].size(), 64u);
  EXPECT_EQ((*slices)[1]["spec"]["devices"].size(), 64u);
  EXPECT_EQ((*slices)[2]["spec"]["devices"].size(), 2u);
  std::string last;
  for (const auto& s : *slices) {
    EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 3);
    for (const auto& d : s["spec"]["devices"]) {
      EXPECT_LT(last, d["name"].get<std::string>());
      last = d["name"];
    }
  }
}

TEST(SliceBuilderTest, SameInventoryGivesSameSlices) {
  auto a = buildSlices(devices(70), owner(), 1);
  auto b = buildSlices(devices(70), owner(), 1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(SliceBuilderTest, EveryValueKindAndTaintIsWritten) {
  DraDevice d{.name = "pci-0000-81-00-2"};
  d.attributes = {
      {"s", std::string("x")}, {"i", int64_t{-3}}, {"b", false}, {"v", Version{"1.2.3"}}};
  d.taints = {{.key = "rdmanet.io/unhealthy", .value = "", .effect = "NoSchedule"},
              {.key = "k", .value = "v", .effect = "None"}};
  d.allow_multiple_allocations = true;
  EXPECT_EQ(deviceJson(d), json::parse(R"({"name":"pci-0000-81-00-2",
              "attributes":{"s":{"string":"x"},"i":{"int":-3},"b":{"bool":false},
                            "v":{"version":"1.2.3"}},
              "taints":[{"key":"rdmanet.io/unhealthy","effect":"NoSchedule"},
                        {"key":"k","value":"v","effect":"None"}],
              "allowMultipleAllocations":true})"));
}

TEST(SliceBuilderTest, NoDevicesGiveNoSlices) {
  auto slices = buildSlices({}, owner(), 1);
  ASSERT_TRUE(slices.ok());
  EXPECT_TRUE(slices->empty());
}

TEST(SliceBuilderTest, GroupsPointIntoTheDevicesAndGiveTheSlicesJson) {
  // The publisher keeps groups (pointers, no JSON) and builds one chunk's JSON at a time: the
  // result must be what buildSlices writes.
  const auto devs = devices(130);
  auto groups = deviceGroups(devs);
  ASSERT_TRUE(groups.ok()) << groups.error().msg;
  ASSERT_EQ(groups->size(), 3u);
  EXPECT_EQ((*groups)[2].size(), 2u);
  for (const auto& g : *groups) {
    for (const DraDevice* d : g) {
      EXPECT_TRUE(d >= devs.data() && d < devs.data() + devs.size()) << "not a copy";
    }
  }
  auto slices = buildSlices(devs, owner(), 1);
  ASSERT_TRUE(slices.ok());
  for (size_t i = 0; i < groups->size(); ++i) {
    EXPECT_EQ(chunkJson((*groups)[i]), (*slices)[i]["spec"]["devices"]) << "group " << i;
  }
  EXPECT_FALSE(deviceGroups(devs, 0).ok());
  EXPECT_FALSE(deviceGroups(devs, kMaxDevicesPerSlice + 1).ok());
}

TEST(SliceBuilderTest, DuplicateOrInvalidDevicesAreRefused) {
  auto dup = devices(2);
  dup[1].name = dup[0].name;
  auto r = buildSlices(dup, owner(), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("used twice"), std::string::npos);

  auto bad = devices(2);
  bad[0].attributes["rdmanet.io/netdev"] = std::string(65, 'n');
  r = buildSlices(bad, owner(), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig);
}

TEST(SliceBuilderTest, BadOwnerNamesAreRefused) {
  auto o = owner();
  o.node_name = "Node_1";
  EXPECT_FALSE(buildSlices(devices(1), o, 1).ok());
  o = owner();
  o.driver = std::string(61, 'a') + ".io";  // 64 characters
  EXPECT_FALSE(buildSlices(devices(1), o, 1).ok());
}

TEST(SliceBuilderTest, GenerateNameOfALongNodeNameStaysAValidName) {
  auto o = owner();
  o.node_name = std::string(50, 'n') + ".rack7.example.com";
  auto slices = buildSlices(devices(1), o, 1);
  ASSERT_TRUE(slices.ok());
  const std::string g = (*slices)[0]["metadata"]["generateName"];
  EXPECT_LE(g.size(), 58u);
  EXPECT_TRUE(g.ends_with("-"));
  EXPECT_EQ(g.find(".-"), std::string::npos) << g;
}

TEST(SliceBuilderTest, ComparableDevicesIgnoreWhatTheServerAdds) {
  const json stored = json::parse(R"([{"name":"d","attributes":{"a":{"int":1}},
      "taints":[{"key":"k","effect":"NoSchedule","timeAdded":"2026-01-01T00:00:00Z"}]}])");
  const json sent = json::parse(R"([{"name":"d","attributes":{"a":{"int":1}},
      "taints":[{"key":"k","effect":"NoSchedule"}]}])");
  EXPECT_EQ(comparableDevices(stored, true), comparableDevices(sent, true));
  const json dropped = json::parse(R"([{"name":"d","attributes":{"a":{"int":1}}}])");
  EXPECT_NE(comparableDevices(dropped, true), comparableDevices(sent, true));
  EXPECT_EQ(comparableDevices(dropped, false), comparableDevices(sent, false));
}

// KEP-4815 as k8s.io/api/resource/v1 (v0.37) spells it: Device.capacity{name: {value}},
// Device.consumesCounters[{counterSet, counters{name: {value}}}], and the pool's counter sets in
// ResourceSliceSpec.sharedCounters[{name, counters}] of slices that hold no devices.
std::vector<CounterSet> pfSets(int n) {
  std::vector<CounterSet> out;
  for (int i = n - 1; i >= 0; --i) {  // reverse order: the builder sorts
    out.push_back(
        {.name = fmt::format("pci-0000-17-00-{:x}", i), .counters = {{"bandwidth", "100G"}}});
  }
  return out;
}

TEST(SliceBuilderTest, ADeviceStatesItsCapacityAndWhatItConsumes) {
  auto devs = devices(1);
  devs[0].capacity["rdmanet.io/bandwidth"] = "25G";
  devs[0].consumes_counters = {
      {.counter_set = "pci-0000-17-00-0", .counters = {{"bandwidth", "25G"}}}};
  const json d = deviceJson(devs[0]);
  EXPECT_EQ(d["capacity"], json::parse(R"({"rdmanet.io/bandwidth": {"value": "25G"}})"));
  EXPECT_EQ(d["consumesCounters"], json::parse(R"([{"counterSet": "pci-0000-17-00-0",
                                                     "counters": {"bandwidth": {"value": "25G"}}}])"));
  // A device without either carries neither key.
  const json plain = deviceJson(devices(1)[0]);
  EXPECT_FALSE(plain.contains("capacity"));
  EXPECT_FALSE(plain.contains("consumesCounters"));
}

// KEP-5075: a shared device's capacity with requestPolicy.default, what a claim that names no
// amount takes; gated with allowMultipleAllocations, so compared only while that is kept.
TEST(SliceBuilderTest, ASharedDevicesCapacityCarriesTheDefaultAClaimTakes) {
  auto devs = devices(1);
  devs[0].allow_multiple_allocations = true;
  devs[0].capacity["rdmanet.io/bandwidth"] = DeviceCapacity("100G", "40G");
  const json d = deviceJson(devs[0]);
  EXPECT_EQ(d["capacity"], json::parse(R"({"rdmanet.io/bandwidth":
                                           {"value": "100G", "requestPolicy": {"default": "40G"}}})"));
  json dropped = json::array({d});
  dropped[0]["capacity"]["rdmanet.io/bandwidth"].erase("requestPolicy");
  dropped[0].erase("allowMultipleAllocations");
  const json sent = json::array({d});
  EXPECT_NE(comparableDevices(dropped, true), comparableDevices(sent, true));
  EXPECT_EQ(comparableDevices(dropped, true, false), comparableDevices(sent, true, false));
}

TEST(SliceBuilderTest, CounterSetsFollowTheDevicesInSlicesOfTheirOwnAtMostEightEach) {
  auto slices = buildSlices(devices(70), owner(), 4, pfSets(9));
  ASSERT_TRUE(slices.ok()) << slices.error().msg;
  ASSERT_EQ(slices->size(), 4u);  // 64 + 6 devices, then 8 + 1 sets
  for (const json& s : *slices) {
    EXPECT_EQ(s["spec"]["pool"]["generation"], 4);
    EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 4);
    EXPECT_NE(s["spec"].contains("devices"), s["spec"].contains("sharedCounters"))
        << "one kind a slice: " << s["spec"].dump();
  }
  EXPECT_EQ((*slices)[1]["spec"]["devices"].size(), 6u);
  const json& sets = (*slices)[2]["spec"]["sharedCounters"];
  ASSERT_EQ(sets.size(), 8u);
  EXPECT_EQ(sets[0], json::parse(R"({"name": "pci-0000-17-00-0",
                                     "counters": {"bandwidth": {"value": "100G"}}})"));
  EXPECT_EQ(sets[7]["name"], "pci-0000-17-00-7");
  ASSERT_EQ((*slices)[3]["spec"]["sharedCounters"].size(), 1u);
  EXPECT_EQ((*slices)[3]["spec"]["sharedCounters"][0]["name"], "pci-0000-17-00-8");

  // Counter sets alone (every device gone) still make a pool.
  auto only_sets = buildSlices({}, owner(), 1, pfSets(1));
  ASSERT_TRUE(only_sets.ok());
  ASSERT_EQ(only_sets->size(), 1u);
  EXPECT_FALSE((*only_sets)[0]["spec"].contains("devices"));
}

TEST(SliceBuilderTest, AConsumptionOfACounterThePoolDoesNotDefineIsRefused) {
  auto devs = devices(2);
  devs[1].consumes_counters = {
      {.counter_set = "pci-0000-17-00-5", .counters = {{"bandwidth", "1G"}}}};
  auto r = buildSlices(devs, owner(), 1, pfSets(2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(r.error().msg.find("consumes counter \"bandwidth\" of counter set "
                               "\"pci-0000-17-00-5\", which the pool does not define"),
            std::string::npos)
      << r.error().msg;
  devs[1].consumes_counters = {{.counter_set = "pci-0000-17-00-1", .counters = {{"lanes", "1"}}}};
  EXPECT_FALSE(buildSlices(devs, owner(), 1, pfSets(2)).ok());

  auto twice = pfSets(2);
  twice[1].name = twice[0].name;
  r = buildSlices(devices(1), owner(), 1, twice);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("is defined twice"), std::string::npos) << r.error().msg;
}

TEST(SliceBuilderTest, ComparableFormsKeepWhatRdmanetWritesAndDropWhatTheServerAdds) {
  auto devs = devices(1);
  devs[0].capacity["rdmanet.io/bandwidth"] = "25G";
  devs[0].consumes_counters = {
      {.counter_set = "pci-0000-17-00-0", .counters = {{"bandwidth", "25G"}}}};
  json stored = json::array({deviceJson(devs[0])});
  EXPECT_EQ(comparableDevices(stored, true), comparableDevices(chunkJson({&devs[0]}), true));
  stored[0]["consumesCounters"][0]["counters"]["bandwidth"]["value"] = "30G";
  EXPECT_NE(comparableDevices(stored, true), comparableDevices(chunkJson({&devs[0]}), true));

  json sets = json::array({counterSetJson(pfSets(1)[0])});
  json with_extra = sets;
  with_extra[0]["counters"]["bandwidth"]["note"] = "x";  // a field rdmanet does not write
  EXPECT_EQ(comparableCounterSets(with_extra), comparableCounterSets(sets));
  with_extra[0]["counters"]["bandwidth"]["value"] = "40G";
  EXPECT_NE(comparableCounterSets(with_extra), comparableCounterSets(sets));
}

}  // namespace
}  // namespace rdmanet::dra
