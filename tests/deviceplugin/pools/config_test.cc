// Config parsing and validation: the formats accepted, and every rejection naming its key.
#include "deviceplugin/pools/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rdmanet::dp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ConfigTest, ParsesSriovDevicePluginFormatUnchanged) {
  auto cfg = parseConfig(R"({
    "resourceList": [{
      "resourceName": "mlnx_sriov_rdma",
      "resourcePrefix": "nvidia.com",
      "deviceType": "netDevice",
      "excludeTopology": true,
      "selectors": {"vendors": ["15B3"], "devices": ["101e"], "drivers": ["mlx5_core"],
                    "pfNames": ["ens1f0#0-3,5"], "rootDevices": ["0000:03:00.1#1"],
                    "pciAddresses": ["0000:03:00.2"], "linkTypes": ["ether"], "isRdma": true}
    }]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  ASSERT_EQ(cfg->pools.size(), 1u);
  const PoolConfig& p = cfg->pools[0];
  EXPECT_EQ(p.fullName(), "nvidia.com/mlnx_sriov_rdma");
  EXPECT_EQ(p.mode, PoolMode::kVf);
  EXPECT_TRUE(p.exclude_topology);
  ASSERT_EQ(p.selectors.size(), 1u);
  const Selector& s = p.selectors[0];
  EXPECT_THAT(s.vendors, ElementsAre("15b3"));
  EXPECT_THAT(s.devices, ElementsAre("101e"));
  ASSERT_EQ(s.pf_names.size(), 1u);
  EXPECT_EQ(s.pf_names[0].pf, "ens1f0");
  EXPECT_EQ(s.pf_names[0].vf_indexes, (std::set<int>{0, 1, 2, 3, 5}));
  EXPECT_EQ(s.root_devices[0].pf, "0000:03:00.1");
  EXPECT_EQ(s.root_devices[0].vf_indexes, (std::set<int>{1}));
  EXPECT_EQ(s.is_rdma, true);
  EXPECT_EQ(p.preferred_allocation, AllocationPolicy::kGpuNear);
}

TEST(ConfigTest, AcceptsAnOrderedListOfSelectorObjects) {
  auto cfg = parseConfig(R"({"resourceList": [{"resourceName": "a",
      "selectors": [{"pfNames": ["ens1f0"]}, {"pfNames": ["ens2f0"]}]}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  ASSERT_EQ(cfg->pools[0].selectors.size(), 2u);
  EXPECT_EQ(cfg->pools[0].selectors[1].pf_names[0].pf, "ens2f0");
}

TEST(ConfigTest, ParsesSharedDevPluginFormatAsSharedPools) {
  auto cfg = parseConfig(R"({"periodicUpdateInterval": 300, "configList": [{
      "resourceName": "hca_shared", "claimBandwidthMbps": 10000, "rdmaHcaMax": 16,
      "selectors": {"vendors": ["15b3"], "deviceIDs": ["101d"], "ifNames": ["ens1f0"]}}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  const PoolConfig& p = cfg->pools[0];
  EXPECT_EQ(p.fullName(), "rdma/hca_shared");
  EXPECT_EQ(p.mode, PoolMode::kShared);
  EXPECT_EQ(p.rdma_hca_max, 16);
  EXPECT_EQ(p.claim_bandwidth_mbps, 10000);
  EXPECT_THAT(p.selectors[0].devices, ElementsAre("101d"));
  EXPECT_THAT(p.selectors[0].if_names, ElementsAre("ens1f0"));
}

TEST(ConfigTest, ParsesRdmanetKeys) {
  auto cfg = parseConfig(R"({"resourcePrefix": "example.com", "resourceList": [{
      "resourceName": "train", "mode": "vf", "lossless": {"priority": 3, "dscp": 26},
      "preferredAllocation": "spread", "podInfoDir": "/var/run/rdmanet/pod-info",
      "vfBandwidthMbps": 25000, "selectors": {"isRdma": true}}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  const PoolConfig& p = cfg->pools[0];
  EXPECT_EQ(p.pod_info_dir, "/var/run/rdmanet/pod-info");
  EXPECT_EQ(p.vf_bandwidth_mbps, 25000);
  EXPECT_EQ(p.fullName(), "example.com/train");
  ASSERT_TRUE(p.lossless);
  EXPECT_EQ(p.lossless->priority, 3);
  EXPECT_EQ(p.lossless->dscp, 26);
  EXPECT_EQ(p.preferred_allocation, AllocationPolicy::kSpread);
}

TEST(ConfigTest, ResourceListPoolsClaimBeforeConfigListPools) {
  auto cfg = parseConfig(R"({"configList": [{"resourceName": "s"}],
                             "resourceList": [{"resourceName": "v"}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  EXPECT_EQ(cfg->pools[0].resource_name, "v");
  EXPECT_EQ(cfg->pools[1].resource_name, "s");
}

TEST(ConfigTest, DefaultConfigHasVfAndSharedPools) {
  PluginConfig cfg = defaultConfig();
  ASSERT_EQ(cfg.pools.size(), 2u);
  EXPECT_EQ(cfg.pools[0].fullName(), "rdma/vf");
  EXPECT_EQ(cfg.pools[1].fullName(), "rdma/shared");
  EXPECT_EQ(cfg.pools[1].mode, PoolMode::kShared);
}

TEST(ConfigTest, SameAsIgnoresWhereThePoolCameFrom) {
  auto a = parseConfig(R"({"resourceList": [{"resourceName": "a"}]})");
  auto b = parseConfig(R"({"resourceList": [{"resourceName": "b"}, {"resourceName": "a"}]})");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->pools[0].sameAs(b->pools[1]));
  EXPECT_FALSE(a->pools[0].sameAs(b->pools[0]));
}

TEST(ConfigTest, LinkTypesReadInAnyCaseWithEthForEther) {
  auto cfg = parseConfig(
      R"({"resourceList": [{"resourceName": "a", "selectors": {"linkTypes": ["Eth", "INFINIBAND"]}}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  EXPECT_EQ(cfg->pools[0].selectors[0].link_types,
            (std::vector<std::string>{"ether", "infiniband"}));
}

struct BadCase {
  std::string name;
  std::string json;
  ErrorCode code;
  std::string key;  // must appear in the message
};

class BadConfigTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfigTest, IsRejectedWithAMessageNamingTheKey) {
  const BadCase& c = GetParam();
  auto cfg = parseConfig(c.json);
  ASSERT_FALSE(cfg.ok()) << c.name;
  EXPECT_EQ(cfg.error().code, c.code) << cfg.error().msg;
  EXPECT_THAT(cfg.error().msg, HasSubstr(c.key));
}

std::string pool(const std::string& body) {
  return R"({"resourceList": [{"resourceName": "a", )" + body + "}]}";
}
std::string sel(const std::string& body) { return pool(R"("selectors": {)" + body + "}"); }

INSTANTIATE_TEST_SUITE_P(
    Table, BadConfigTest,
    ::testing::Values(
        BadCase{"NotJson", "{\"resourceList\": [", ErrorCode::kDecodeFailure, "not JSON"},
        // Found by dp_pool_config_fuzz: a number beyond double's range threw out_of_range, which
        // nothing caught, and the daemon aborted (at start, or at a hot reload).
        BadCase{"NumberBeyondDouble", pool(R"("rdmaHcaMax": 1e999)"), ErrorCode::kDecodeFailure,
                "not JSON"},
        BadCase{"TopLevelArray", "[]", ErrorCode::kInvalidConfig, "top level"},
        BadCase{"UnknownTopKey", R"({"resourceLists": []})", ErrorCode::kInvalidConfig,
                "resourceLists: unknown key"},
        BadCase{"NoPools", R"({"resourceList": []})", ErrorCode::kInvalidConfig, "resourceList"},
        BadCase{"UnknownPoolKey", pool(R"("selector": {})"), ErrorCode::kInvalidConfig,
                "resourceList[0].selector: unknown key"},
        BadCase{"RelativePodInfoDir", pool(R"("podInfoDir": "run/x")"), ErrorCode::kInvalidConfig,
                "resourceList[0].podInfoDir: must be an absolute"},
        BadCase{"PodInfoDirWithDotDot", pool(R"("podInfoDir": "/run/../etc")"),
                ErrorCode::kInvalidConfig, "resourceList[0].podInfoDir: must be an absolute"},
        BadCase{"PodInfoDirOnSharedPool",
                R"({"configList": [{"resourceName": "s", "podInfoDir": "/run/x"}]})",
                ErrorCode::kInvalidConfig, "configList[0].podInfoDir: applies only to mode"},
        BadCase{"VfBandwidthOnSharedPool",
                R"({"configList": [{"resourceName": "s", "vfBandwidthMbps": 100}]})",
                ErrorCode::kInvalidConfig, "configList[0].vfBandwidthMbps: applies only to mode"},
        BadCase{"ClaimBandwidthOnVfPool", pool(R"("claimBandwidthMbps": 100)"),
                ErrorCode::kInvalidConfig,
                "resourceList[0].claimBandwidthMbps: applies only to mode"},
        BadCase{"ClaimBandwidthZero",
                R"({"configList": [{"resourceName": "s", "claimBandwidthMbps": 0}]})",
                ErrorCode::kInvalidConfig, "configList[0].claimBandwidthMbps"},
        BadCase{"VfBandwidthZero", pool(R"("vfBandwidthMbps": 0)"), ErrorCode::kInvalidConfig,
                "resourceList[0].vfBandwidthMbps"},
        BadCase{"VfBandwidthAboveTenTerabits", pool(R"("vfBandwidthMbps": 10000001)"),
                ErrorCode::kInvalidConfig, "resourceList[0].vfBandwidthMbps"},
        BadCase{"VfBandwidthNotANumber", pool(R"("vfBandwidthMbps": "25G")"),
                ErrorCode::kInvalidConfig, "resourceList[0].vfBandwidthMbps"},
        BadCase{"MissingName", R"({"resourceList": [{"mode": "vf"}]})", ErrorCode::kInvalidConfig,
                "resourceList[0].resourceName: is required"},
        BadCase{"BadName", R"({"resourceList": [{"resourceName": "a/b"}]})",
                ErrorCode::kInvalidConfig, "resourceList[0].resourceName"},
        BadCase{"BadPrefix", R"({"resourcePrefix": "Bad_Prefix", "resourceList": []})",
                ErrorCode::kInvalidConfig, "resourcePrefix"},
        BadCase{"PrefixEmptyLabel", R"({"resourcePrefix": "example..com", "resourceList": []})",
                ErrorCode::kInvalidConfig, "resourcePrefix"},
        BadCase{"PoolPrefixLeadingHyphen",
                R"({"resourceList": [{"resourceName": "vf", "resourcePrefix": "-x.io"}]})",
                ErrorCode::kInvalidConfig, "resourceList[0].resourcePrefix"},
        BadCase{"Accelerator", pool(R"("deviceType": "accelerator")"), ErrorCode::kUnsupportedField,
                "resourceList[0].deviceType"},
        BadCase{"UnknownSelectorKey", sel(R"("vendor": ["15b3"])"), ErrorCode::kInvalidConfig,
                "resourceList[0].selectors.vendor: unknown key"},
        BadCase{"UnsupportedSelectorKey", sel(R"("ddpProfiles": ["x"])"),
                ErrorCode::kUnsupportedField, "selectors.ddpProfiles"},
        BadCase{"VendorNotHex", sel(R"("vendors": ["15bz"])"), ErrorCode::kInvalidConfig,
                "selectors.vendors[0]"},
        BadCase{"VendorNotString", sel(R"("vendors": [5555])"), ErrorCode::kInvalidConfig,
                "selectors.vendors[0]"},
        BadCase{"VendorsNotList", sel(R"("vendors": "15b3")"), ErrorCode::kInvalidConfig,
                "selectors.vendors"},
        BadCase{"BadPciAddress", sel(R"("pciAddresses": ["03:00.2"])"), ErrorCode::kInvalidConfig,
                "selectors.pciAddresses[0]"},
        BadCase{"BackwardsRange", sel(R"("pfNames": ["ens1f0#3-1"])"), ErrorCode::kInvalidConfig,
                "selectors.pfNames[0]"},
        BadCase{"EmptyRange", sel(R"("pfNames": ["ens1f0#"])"), ErrorCode::kInvalidConfig,
                "selectors.pfNames[0]"},
        BadCase{"NonNumericRange", sel(R"("pfNames": ["ens1f0#a-b"])"), ErrorCode::kInvalidConfig,
                "selectors.pfNames[0]"},
        BadCase{"TrailingComma", sel(R"("pfNames": ["ens1f0#1,"])"), ErrorCode::kInvalidConfig,
                "selectors.pfNames[0]"},
        BadCase{"BadIfName", sel(R"("pfNames": ["a/b"])"), ErrorCode::kInvalidConfig,
                "selectors.pfNames[0]"},
        BadCase{"BadRootDevice", sel(R"("rootDevices": ["ens1f0#1"])"), ErrorCode::kInvalidConfig,
                "selectors.rootDevices[0]"},
        BadCase{"BadLinkType", sel(R"("linkTypes": ["eth", "Wifi"])"), ErrorCode::kInvalidConfig,
                R"(selectors.linkTypes[1]: "Wifi" is not one of "ether", "infiniband")"},
        BadCase{"IsRdmaNotBool", sel(R"("isRdma": "yes")"), ErrorCode::kInvalidConfig,
                "selectors.isRdma"},
        BadCase{"BadMode", pool(R"("mode": "sriov")"), ErrorCode::kInvalidConfig,
                R"(resourceList[0].mode: "sriov" is not one of "vf", "shared")"},
        BadCase{"PriorityOutOfRange", pool(R"("lossless": {"priority": 9})"),
                ErrorCode::kInvalidConfig, "resourceList[0].lossless.priority"},
        BadCase{"DscpOutOfRange", pool(R"("lossless": {"dscp": 64})"), ErrorCode::kInvalidConfig,
                "resourceList[0].lossless.dscp"},
        BadCase{"LosslessUnknownKey", pool(R"("lossless": {"pcp": 3})"), ErrorCode::kInvalidConfig,
                "resourceList[0].lossless.pcp"},
        BadCase{"LosslessEmpty", pool(R"("lossless": {})"), ErrorCode::kInvalidConfig,
                "resourceList[0].lossless"},
        BadCase{"BadPolicy", pool(R"("preferredAllocation": "closest")"), ErrorCode::kInvalidConfig,
                R"(resourceList[0].preferredAllocation: "closest" is not one of "pack", "spread", )"
                R"("gpu-near")"},
        BadCase{"ZeroSlots", R"({"configList": [{"resourceName": "s", "rdmaHcaMax": 0}]})",
                ErrorCode::kInvalidConfig, "configList[0].rdmaHcaMax"},
        BadCase{"SlotsInVfMode", pool(R"("rdmaHcaMax": 4)"), ErrorCode::kInvalidConfig,
                "resourceList[0].rdmaHcaMax"},
        BadCase{"DuplicateName",
                R"({"resourceList": [{"resourceName": "a"}, {"resourceName": "a"}]})",
                ErrorCode::kInvalidConfig, "resourceList[1].resourceName"},
        BadCase{"OverlappingVfRanges",
                R"({"resourceList": [
                    {"resourceName": "a", "selectors": {"pfNames": ["ens1f0#0-3"]}},
                    {"resourceName": "b", "selectors": {"pfNames": ["ens1f0#3-5"]}}]})",
                ErrorCode::kInvalidConfig, "resourceList[1].selectors"},
        BadCase{"OverlappingWholePf",
                R"({"resourceList": [
                    {"resourceName": "a", "selectors": {"pfNames": ["ens1f0"]}},
                    {"resourceName": "b", "selectors": [{"pfNames": ["ens1f0#2"]}]}]})",
                ErrorCode::kInvalidConfig, "pfNames"},
        BadCase{"OverlappingAddresses",
                R"({"resourceList": [
                    {"resourceName": "a", "selectors": {"pciAddresses": ["0000:03:00.2"]}},
                    {"resourceName": "b", "selectors": {"pciAddresses": ["0000:03:00.2"]}}]})",
                ErrorCode::kInvalidConfig, "pciAddresses"},
        BadCase{"OverlappingRootDevices",
                R"({"resourceList": [
                    {"resourceName": "a", "selectors": {"rootDevices": ["0000:03:00.0#1"]}},
                    {"resourceName": "b", "selectors": {"rootDevices": ["0000:03:00.0"]}}]})",
                ErrorCode::kInvalidConfig, "rootDevices"}),
    [](const auto& info) { return info.param.name; });

TEST(ConfigTest, DisjointVfRangesOfOnePfAreNotAnOverlap) {
  auto cfg = parseConfig(R"({"resourceList": [
      {"resourceName": "a", "selectors": {"pfNames": ["ens1f0#0-1"]}},
      {"resourceName": "b", "selectors": {"pfNames": ["ens1f0#2-3"]}}]})");
  EXPECT_TRUE(cfg.ok()) << cfg.error().msg;
}

TEST(ConfigTest, SharedAndVfPoolsMayNameTheSamePf) {
  auto cfg = parseConfig(R"({"resourceList": [
      {"resourceName": "v", "selectors": {"pfNames": ["ens1f0"]}},
      {"resourceName": "s", "mode": "shared", "selectors": {"pfNames": ["ens1f0"]}}]})");
  EXPECT_TRUE(cfg.ok()) << cfg.error().msg;
}

TEST(ConfigTest, MissingFileIsAnIoError) {
  auto cfg = loadConfigFile("/nonexistent/rdmanet-dp.json");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().code, ErrorCode::kIoFailure);
}

}  // namespace
}  // namespace rdmanet::dp
