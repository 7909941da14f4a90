// Rails: the config's rule (rail_rule.h), a port's LLDP neighbour reaching its pool devices
// through NodePools, and what Allocate hands the container (PCIDEVICE_*_RAILS, the rdmanet key
// of PCIDEVICE_*_INFO), on the simulated node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/base/sysfs.h"
#include "deviceplugin/pools/allocate.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/node_pools.h"
#include "deviceplugin/pools/rail_rule.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

using ::testing::HasSubstr;
using testing::TestNode;

LldpNeighbor leaf(std::string name, std::string port = "Ethernet1/1") {
  return {.chassis_id = "0c:42:a1:00:00:01",
          .chassis_id_subtype = 4,
          .port_id = std::move(port),
          .port_id_subtype = 5,
          .ttl_seconds = 120,
          .system_name = std::move(name)};
}

RailRule rule(std::string_view json) {
  auto r = parseRailRule(nlohmann::json::parse(json), "rails");
  EXPECT_TRUE(r.ok()) << r.error().msg;
  return r.ok() ? *r : RailRule{};
}

TEST(RailRuleTest, TheDefaultNamesTheRailAfterTheSwitch) {
  EXPECT_EQ(railOf(RailRule{}, leaf("Leaf-3")), "leaf-3");  // lowercased
  EXPECT_EQ(railOf(RailRule{}, leaf("")), std::nullopt);    // no system name
  // Not a DNS label once lowercased: no rail rather than a name a selector cannot hold.
  EXPECT_EQ(railOf(RailRule{}, leaf("leaf 3")), std::nullopt);
  EXPECT_EQ(railOf(RailRule{}, leaf(std::string(64, 'a'))), std::nullopt);
}

TEST(RailRuleTest, AMatchsGroupsNameTheRail) {
  RailRule r = rule(R"j({"match": "leaf-([0-9]+)\\..*", "rail": "rail-$1"})j");
  EXPECT_EQ(railOf(r, leaf("leaf-12.pod1.example")), "rail-12");
  EXPECT_EQ(railOf(r, leaf("spine-1.pod1")), std::nullopt);  // the whole field must match
  RailRule by_port = rule(R"j({"from": "portId", "match": "Ethernet([0-9]+)/.*",
                              "rail": "r$1"})j");
  EXPECT_EQ(railOf(by_port, leaf("x", "Ethernet4/1")), "r4");
  RailRule by_chassis = rule(R"j({"from": "chassisId", "match": "(.*):(01)", "rail": "c$2"})j");
  EXPECT_EQ(railOf(by_chassis, leaf("x")), "c01");
  RailRule by_desc = rule(R"j({"from": "portDescription"})j");
  LldpNeighbor n = leaf("x");
  n.port_description = "rail7";
  EXPECT_EQ(railOf(by_desc, n), "rail7");
}

TEST(RailRuleTest, BadRulesAreRefusedNamingTheKey) {
  struct Case {
    const char* json;
    const char* want;
  } cases[] = {
      {R"j({"from": "mac"})j", "rails.from: \"mac\" is not one of"},
      {R"j({"match": "leaf-(["})j", "rails.match: \"leaf-([\" is not a regular expression"},
      {R"j({"rail": ""})j", "rails.rail: must not be empty"},
      {R"j({"rule": "x"})j", "rails.rule: unknown key"},
      {R"j("systemName")j", "rails: must be an object"},
  };
  for (const Case& c : cases) {
    auto r = parseRailRule(nlohmann::json::parse(c.json), "rails");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig);
    EXPECT_THAT(r.error().msg, HasSubstr(c.want));
  }
}

TEST(RailRuleTest, TheConfigCarriesItsRule) {
  auto cfg = parseConfig(R"j({"resourceList": [{"resourceName": "vf"}],
                             "rails": {"match": "leaf-(.*)", "rail": "rail-$1"}})j");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  EXPECT_EQ(railOf(cfg->rails, leaf("leaf-2")), "rail-2");
  auto bad = parseConfig(R"j({"resourceList": [{"resourceName": "vf"}], "rails": {"from": 1}})j");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().msg, HasSubstr("rails.from"));
}

class RailsOnTheNodeTest : public ::testing::Test {
 protected:
  RailsOnTheNodeTest() : sysfs_(node_.root()), core_(sysfs_, defaultConfig()) { core_.rescan(); }
  const PoolDevice& device(const std::vector<Pool>& pools, const std::string& id) {
    for (const Pool& p : pools) {
      if (const PoolDevice* d = p.find(id)) return *d;
    }
    ADD_FAILURE() << "no device " << id;
    static const PoolDevice none;
    return none;
  }
  TestNode node_;
  Sysfs sysfs_;
  NodePools core_;
};

TEST_F(RailsOnTheNodeTest, TheListenedPortsAreTheNonVfNetdevs) {
  std::set<std::string> want;
  for (int pf = 0; pf < 4; ++pf) want.insert(node_.pfNetdev(pf));
  EXPECT_EQ(core_.portNetdevs(), want);
}

TEST_F(RailsOnTheNodeTest, APortsNeighbourReachesThePfAndItsVfsOnly) {
  EXPECT_TRUE(core_.setNeighbors({{node_.pfNetdev(1), leaf("leaf-1", "Ethernet2")}}));
  EXPECT_FALSE(core_.setNeighbors({{node_.pfNetdev(1), leaf("leaf-1", "Ethernet2")}}));
  BuiltPools built = core_.build();
  const PoolDevice& vf = device(built.pools, node_.vf(1, 3).str());
  ASSERT_TRUE(vf.neighbor.has_value());
  EXPECT_EQ(vf.neighbor->port_id, "Ethernet2");
  EXPECT_EQ(vf.rail, "leaf-1");
  const PoolDevice& pf = device(built.pools, sharedSlotId(node_.pf(1), 0));
  EXPECT_EQ(pf.rail, "leaf-1");
  const PoolDevice& other = device(built.pools, node_.vf(0, 0).str());
  EXPECT_FALSE(other.neighbor.has_value());
  EXPECT_EQ(other.rail, "");

  // A new rule names the same neighbour's rail anew.
  auto cfg = parseConfig(R"j({"resourceList": [{"resourceName": "vf"}],
                             "rails": {"match": "leaf-(.*)", "rail": "rail-$1"}})j");
  ASSERT_TRUE(cfg.ok());
  core_.setConfig(*cfg);
  EXPECT_EQ(device(core_.build().pools, node_.vf(1, 3).str()).rail, "rail-1");

  // Forgotten (TTL): the devices lose it.
  EXPECT_TRUE(core_.setNeighbors({}));
  EXPECT_FALSE(device(core_.build().pools, node_.vf(1, 3).str()).neighbor.has_value());
}

TEST_F(RailsOnTheNodeTest, PortNeighborsNameEachPortsRailUnderTheRunningRule) {
  ASSERT_TRUE(core_.setNeighbors({{node_.pfNetdev(0), leaf("leaf-0", "Ethernet1")},
                                  {node_.pfNetdev(2), leaf("spine 2", "Ethernet3")}}));
  auto by_port = core_.portNeighbors();
  ASSERT_EQ(by_port.size(), 2u);
  EXPECT_EQ(by_port.at(node_.pfNetdev(0)).neighbor.port_id, "Ethernet1");
  EXPECT_EQ(by_port.at(node_.pfNetdev(0)).rail, "leaf-0");
  EXPECT_EQ(by_port.at(node_.pfNetdev(2)).rail, "");  // not a DNS label: no rail
  auto cfg = parseConfig(R"j({"resourceList": [{"resourceName": "vf"}],
                             "rails": {"match": "leaf-(.*)", "rail": "rail-$1"}})j");
  ASSERT_TRUE(cfg.ok());
  core_.setConfig(*cfg);
  EXPECT_EQ(core_.portNeighbors().at(node_.pfNetdev(0)).rail, "rail-0");
  ASSERT_TRUE(core_.setNeighbors({{node_.pfNetdev(2), leaf("spine 2", "Ethernet3")}}));
  EXPECT_FALSE(core_.portNeighbors().contains(node_.pfNetdev(0)));
}

TEST_F(RailsOnTheNodeTest, AllocateNamesEachDevicesRailByPosition) {
  ASSERT_TRUE(core_.setNeighbors({{node_.pfNetdev(0), leaf("leaf-0", "Ethernet1")},
                                  {node_.pfNetdev(2), leaf("leaf-2", "Ethernet3")}}));
  BuiltPools built = core_.build();
  const Pool& vfs = built.pools[0];
  const std::string a = node_.vf(0, 1).str(), b = node_.vf(1, 0).str(), c = node_.vf(2, 2).str();
  auto r = buildAllocation(vfs, {a, b, c}, {});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->envs.at("PCIDEVICE_RDMA_VF"), a + "," + b + "," + c);
  EXPECT_EQ(r->envs.at("PCIDEVICE_RDMA_VF_RAILS"), "leaf-0,,leaf-2");
  auto info = nlohmann::json::parse(r->envs.at("PCIDEVICE_RDMA_VF_INFO"));
  EXPECT_EQ(
      info[a]["rdmanet"],
      (nlohmann::json{{"rail", "leaf-0"}, {"switch", "leaf-0"}, {"switchPort", "Ethernet1"}}));
  EXPECT_FALSE(info[b].contains("rdmanet"));
  EXPECT_EQ(info[c]["rdmanet"]["switchPort"], "Ethernet3");
  // No rail known for any of them: no _RAILS at all.
  auto none = buildAllocation(vfs, {b}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->envs.contains("PCIDEVICE_RDMA_VF_RAILS"));
}

}  // namespace
}  // namespace rdmanet::dp
