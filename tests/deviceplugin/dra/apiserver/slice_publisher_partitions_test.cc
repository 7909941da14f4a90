// The publisher with counter sets (KEP-4815) against the stand-in API server, which validates
// them as resource.k8s.io/v1 does, stores quantities in canonical form, and drops them while its
// DRAPartitionableDevices gate is off: the sets go into slices of their own in the same pool
// and generation, an unchanged pool writes nothing, and without the gate the pool falls back to
// plain devices at once and stays quiet.
#include "common/kube/api_error.h"
#include "tests/deviceplugin/dra/apiserver/publisher_fixture.h"

namespace rdmanet::dra {
namespace {

using json = nlohmann::json;

constexpr const char* kPf = "pci-0000-17-00-0";

// The pool's counter sets and its devices' consumption, as the server holds them.
json storedSets(const std::vector<json>& slices) {
  json out = json::array();
  for (const auto& s : slices) {
    for (const auto& set : s["spec"].value("sharedCounters", json::array())) out.push_back(set);
  }
  return out;
}
size_t consumingDevices(const std::vector<json>& slices) {
  size_t n = 0;
  for (const auto& s : slices) {
    for (const auto& d : s["spec"].value("devices", json::array())) {
      n += d.contains("consumesCounters") ? 1 : 0;
    }
  }
  return n;
}

// n VFs of one PF, each taking 30G of its 100G: three fit on the port.
struct PartitionedPool {
  std::vector<DraDevice> devices;
  std::vector<CounterSet> sets;
};
class PartitionsTest : public PublisherTest {
 protected:
  static PartitionedPool partitioned(int n, const std::string& port = "100G") {
    PartitionedPool out{.devices = inventory(n),
                        .sets = {{.name = kPf, .counters = {{"bandwidth", port}}}}};
    for (auto& d : out.devices) {
      d.capacity["rdmanet.io/bandwidth"] = "30G";
      d.consumes_counters = {{.counter_set = kPf, .counters = {{"bandwidth", "30G"}}}};
    }
    return out;
  }
};

TEST_F(PartitionsTest, CounterSetsArePublishedInASliceOfTheirOwnInThePoolsGeneration) {
  auto p = publisher();
  const auto pool = partitioned(70);
  auto r = p.publish(pool.devices, pool.sets);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->slices, 3u);  // 64 + 6 devices, 1 counter set
  EXPECT_FALSE(r->partitions_dropped);
  const auto all = slices();
  ASSERT_EQ(all.size(), 3u);
  expectPool(1);
  EXPECT_EQ(storedSets(all), json::parse(R"([{"name": "pci-0000-17-00-0",
                                              "counters": {"bandwidth": {"value": "100G"}}}])"));
  EXPECT_EQ(consumingDevices(all), 70u);
  EXPECT_EQ(publishedDevices(), names(pool.devices));

  // What the server stored reads back as what rdmanet writes: nothing to rewrite.
  const int before = writes();
  r = p.publish(pool.devices, pool.sets);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(writes(), before);
  // Nor after a restart.
  auto fresh = publisher();
  r = fresh.publish(pool.devices, pool.sets);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_FALSE(r->changed);
}

TEST_F(PartitionsTest, ACounterChangeMovesThePoolToANewGenerationInPlace) {
  auto p = publisher();
  auto pool = partitioned(3);
  ASSERT_TRUE(p.publish(pool.devices, pool.sets).ok());
  const auto names_before = sliceNames();
  pool.sets[0].counters["bandwidth"] = "200G";  // the port came up at a higher speed
  auto r = p.publish(pool.devices, pool.sets);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->generation, 2);
  EXPECT_EQ(r->updated, 2);
  EXPECT_EQ(r->created + r->deleted, 0);
  EXPECT_EQ(sliceNames(), names_before);
  expectPool(2);
  EXPECT_EQ(storedSets(slices())[0]["counters"]["bandwidth"]["value"], "200G");

  // The share dropped: devices no longer consume, the counter-set slice goes.
  auto r2 = p.publish(inventory(3));
  ASSERT_TRUE(r2.ok()) << r2.error().msg;
  EXPECT_EQ(r2->slices, 1u);
  EXPECT_EQ(slices().size(), 1u);
  expectPool(3);
}

TEST_F(PartitionsTest, WithoutTheGateThePoolFallsBackToPlainDevicesAndSaysSo) {
  server_.setGate(std::string(kPartitionableDevicesGate), false);
  auto p = publisher();
  const auto pool = partitioned(4);
  auto r = p.publish(pool.devices, pool.sets);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_TRUE(r->partitions_dropped);
  EXPECT_TRUE(p.partitionsDropped());
  EXPECT_FALSE(r->taints_dropped);
  // At once, in the same publish: one slice of plain devices, which keep their capacity.
  const auto all = slices();
  ASSERT_EQ(all.size(), 1u);
  expectPool(all[0]["spec"]["pool"]["generation"].get<int64_t>());
  EXPECT_EQ(storedSets(all), json::array());
  EXPECT_EQ(consumingDevices(all), 0u);
  EXPECT_EQ(all[0]["spec"]["devices"][0]["capacity"]["rdmanet.io/bandwidth"]["value"], "30G");
  EXPECT_EQ(publishedDevices(), names(pool.devices));

  const int before = writes();
  r = p.publish(pool.devices, pool.sets);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed) << "the dropped sets are not a difference to fix forever";
  EXPECT_EQ(writes(), before);

  // The gate is turned on and the daemon restarts: the partitions are published.
  server_.setGate(std::string(kPartitionableDevicesGate), true);
  auto fresh = publisher();
  r = fresh.publish(pool.devices, pool.sets);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_FALSE(r->partitions_dropped);
  EXPECT_EQ(slices().size(), 2u);
  EXPECT_EQ(consumingDevices(slices()), 4u);
  expectPool(r->generation);
}

TEST_F(PartitionsTest, TheStandInRefusesWhatTheApiServerRefuses) {
  // A slice with devices and counter sets at once, and nine sets in one slice: both 422.
  const auto pool = partitioned(1);
  json both = sliceObject({.node_name = kNode}, "devices", chunkJson({&pool.devices[0]}), 1, 1);
  both["spec"]["sharedCounters"] = json::array({counterSetJson(pool.sets[0])});
  auto r = client().create(kResourceSlicesPath, both);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::isInvalid(r.error())) << r.error().msg;
  json nine = sliceObject({.node_name = kNode}, "sharedCounters", json::array(), 1, 1);
  for (int i = 0; i < 9; ++i) {
    nine["spec"]["sharedCounters"].push_back(
        {{"name", "set-" + std::to_string(i)}, {"counters", {{"bandwidth", {{"value", "1G"}}}}}});
  }
  r = client().create(kResourceSlicesPath, nine);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("must have at most 8 items"), std::string::npos) << r.error().msg;
  nine["spec"]["sharedCounters"].erase(8);
  EXPECT_TRUE(client().create(kResourceSlicesPath, nine).ok());
}

}  // namespace
}  // namespace rdmanet::dra
