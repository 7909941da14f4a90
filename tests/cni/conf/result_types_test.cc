#include "cni/conf/result_types.h"

#include <gtest/gtest.h>

#include "cni/conf/json_util.h"

namespace rdmanet::cni {
namespace {

CniResult sample() {
  CniResult r;
  r.interfaces.push_back({.name = "net1",
                          .mac = "02:00:00:00:00:01",
                          .mtu = 9000,
                          .sandbox = "/var/run/netns/p",
                          .pci_id = "0000:81:10.2"});
  r.ips.push_back({.address = *IpPrefix::parse("10.1.0.5/24"),
                   .gateway = *IpAddress::parse("10.1.0.1"),
                   .interface = 0});
  r.ips.push_back({.address = *IpPrefix::parse("fd00::5/64"), .interface = 0});
  r.routes.push_back({.dst = *IpPrefix::parse("0.0.0.0/0"),
                      .gw = *IpAddress::parse("10.1.0.1"),
                      .mtu = 1400,
                      .table = 100});
  r.dns.nameservers = {"10.1.0.1"};
  return r;
}

TEST(ResultTest, Version031CarriesIpVersionAndNoMtu) {
  json j = resultToJson(sample(), "0.3.1");
  EXPECT_EQ(j["cniVersion"], "0.3.1");
  EXPECT_EQ(j["ips"][0]["version"], "4");
  EXPECT_EQ(j["ips"][1]["version"], "6");
  EXPECT_FALSE(j["interfaces"][0].contains("mtu"));
  EXPECT_FALSE(j["interfaces"][0].contains("pciID"));
  EXPECT_FALSE(j["routes"][0].contains("mtu"));
}

TEST(ResultTest, Version100DropsIpVersion) {
  json j = resultToJson(sample(), "1.0.0");
  EXPECT_FALSE(j["ips"][0].contains("version"));
  EXPECT_EQ(j["ips"][0]["address"], "10.1.0.5/24");
  EXPECT_EQ(j["ips"][0]["gateway"], "10.1.0.1");
  EXPECT_EQ(j["ips"][0]["interface"], 0);
  EXPECT_FALSE(j["interfaces"][0].contains("mtu"));
}

TEST(ResultTest, Version110AddsMtuPciIdAndRouteAttributes) {
  json j = resultToJson(sample(), "1.1.0");
  EXPECT_EQ(j["interfaces"][0]["mtu"], 9000);
  EXPECT_EQ(j["interfaces"][0]["pciID"], "0000:81:10.2");
  EXPECT_EQ(j["routes"][0]["mtu"], 1400);
  EXPECT_EQ(j["routes"][0]["table"], 100);
}

TEST(ResultTest, RoundTripsThroughEveryVersion) {
  for (const char* v : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    auto back = parseResult(resultToJson(sample(), v));
    ASSERT_TRUE(back.ok()) << v << ": " << back.error().msg;
    EXPECT_EQ(back->ips, sample().ips) << v;
    EXPECT_EQ(back->dns, sample().dns) << v;
    EXPECT_EQ(back->cni_version, v);
  }
  auto full = parseResult(resultToJson(sample(), "1.1.0"));
  ASSERT_TRUE(full.ok());
  full->cni_version.clear();
  EXPECT_EQ(*full, sample());
}

TEST(ResultTest, ParsesALegacy020IpamResult) {
  auto r = parseResult(*parseJson(R"({"cniVersion": "0.2.0",
    "ip4": {"ip": "10.0.0.2/24", "gateway": "10.0.0.1", "routes": [{"dst": "0.0.0.0/0"}]}})"));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  ASSERT_EQ(r->ips.size(), 1u);
  EXPECT_EQ(r->ips[0].address.str(), "10.0.0.2/24");
  ASSERT_EQ(r->routes.size(), 1u);
}

TEST(ResultTest, ParsesHostLocalOutput) {
  // What /usr/lib/cni/host-local 1.1.1 prints for cniVersion 1.0.0.
  auto r = parseResult(*parseJson(R"({"cniVersion":"1.0.0","ips":[{"address":"10.10.0.2/24",
    "gateway":"10.10.0.1"}],"routes":[{"dst":"0.0.0.0/0","gw":"10.10.0.1"}],"dns":{}})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ips[0].gateway->str(), "10.10.0.1");
  EXPECT_EQ(r->routes[0].gw->str(), "10.10.0.1");
}

TEST(ResultTest, RejectsBadAddressesNamingTheField) {
  auto r = parseResult(*parseJson(R"({"ips": [{"address": "10.0.0.300/24"}]})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(r.error().msg.find("address"), std::string::npos);
  auto idx = parseResult(*parseJson(R"({"ips": [{"address": "10.0.0.3/24", "interface": 2}]})"));
  ASSERT_FALSE(idx.ok());
  auto types = parseResult(*parseJson(R"({"routes": [{"dst": 5}]})"));
  ASSERT_FALSE(types.ok());
  EXPECT_NE(types.error().msg.find("dst"), std::string::npos);
}

TEST(ResultTest, ErrorJsonHasCodeMsgDetails) {
  json j = errorToJson(makeError(ErrorCode::kInvalidConfig, "bad vlan", "more"), "1.0.0");
  EXPECT_EQ(j["code"], 7);
  EXPECT_EQ(j["msg"], "bad vlan");
  EXPECT_EQ(j["details"], "more");
  EXPECT_EQ(j["cniVersion"], "1.0.0");
  EXPECT_FALSE(errorToJson(makeError(ErrorCode::kInternal, "x"), "1.0.0").contains("details"));
}

}  // namespace
}  // namespace rdmanet::cni
