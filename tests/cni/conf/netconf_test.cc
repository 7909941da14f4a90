#include "cni/conf/netconf.h"

#include <gtest/gtest.h>

namespace rdmanet::cni {
namespace {

Result<NetConf> parse(const std::string& text, Command cmd = Command::kAdd,
                      const CniArgs& args = {}) {
  return parseNetConf(text, cmd, args);
}

// A netconf written for sriov-cni, with only "type" changed.
constexpr const char* kSriovCni = R"({
  "cniVersion": "0.3.1", "name": "sriov-net", "type": "rdmanet",
  "deviceID": "0000:81:10.2", "vlan": 100, "vlanQoS": 3, "vlanProto": "802.1Q",
  "spoofchk": "on", "trust": "off", "link_state": "enable",
  "min_tx_rate": 100, "max_tx_rate": 1000, "mac": "02:00:00:00:00:0a",
  "logLevel": "debug", "logFile": "/var/log/sriov.log",
  "ipam": {"type": "host-local", "subnet": "10.56.217.0/24"}
})";

TEST(NetConfTest, ParsesASriovCniNetconf) {
  auto c = parse(kSriovCni);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_FALSE(c->mode.has_value());
  EXPECT_EQ(c->device_id->str(), "0000:81:10.2");
  EXPECT_EQ(c->vlan, 100);
  EXPECT_EQ(c->vlan_qos, 3);
  EXPECT_EQ(c->vlan_proto, 0x8100);
  EXPECT_EQ(c->spoofchk, true);
  EXPECT_EQ(c->trust, false);
  EXPECT_EQ(c->link_state, VfLinkState::kEnable);
  EXPECT_EQ(c->min_tx_rate, 100u);
  EXPECT_EQ(c->max_tx_rate, 1000u);
  EXPECT_EQ(c->mac->str(), "02:00:00:00:00:0a");
  EXPECT_EQ(c->ipam_type, "host-local");
  EXPECT_EQ(c->pcp(), 3);
}

TEST(NetConfTest, ParsesAReferenceMacvlanNetconfAsMacvlanWithSubMode) {
  auto c = parse(R"({"cniVersion": "1.0.0", "name": "mv", "type": "rdmanet",
    "master": "eth0", "mode": "vepa", "mtu": 1500,
    "ipam": {"type": "static", "addresses": [{"address": "10.1.1.2/24"}]}})");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->mode, Mode::kMacvlan);
  EXPECT_EQ(c->macvlan_mode, MacvlanMode::kVepa);
  EXPECT_EQ(c->master, "eth0");
  EXPECT_EQ(c->mtu, 1500u);
}

TEST(NetConfTest, ParsesAReferenceHostDeviceNetconf) {
  auto c = parse(R"({"cniVersion": "0.4.0", "name": "hd", "type": "rdmanet",
    "device": "ens1f0"})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->device, "ens1f0");
  auto p = parse(R"({"cniVersion": "0.4.0", "name": "hd", "type": "rdmanet",
    "pciBusID": "0000:3b:00.1"})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->device_id->str(), "0000:3b:00.1");
  auto h = parse(R"({"cniVersion": "0.4.0", "name": "hd", "type": "rdmanet",
    "hwaddr": "02:11:22:33:44:55"})");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->hwaddr->str(), "02:11:22:33:44:55");
}

TEST(NetConfTest, RuntimeConfigOverridesTopLevelAndArgs) {
  CniArgs args;
  args.mac = "02:00:00:00:00:02";
  auto c = parse(R"({"cniVersion": "1.1.0", "name": "n", "type": "rdmanet",
    "deviceID": "0000:81:10.0", "mac": "02:00:00:00:00:01", "allowPodMac": true,
    "allowPodIPs": true,
    "runtimeConfig": {"deviceID": "0000:81:10.4", "mac": "02:00:00:00:00:03",
      "ips": ["10.0.0.5/24", "fd00::5/64"], "CNIDeviceInfoFile": "/var/run/k8s.cni.cncf.io/x.json"}})",
                 Command::kAdd, args);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->device_id->str(), "0000:81:10.4");
  // Not the netconf's deviceID: the pod's own choice, which ADD checks it owns.
  ASSERT_TRUE(c->pod_device_id.has_value());
  EXPECT_EQ(c->pod_device_id->str(), "0000:81:10.4");
  EXPECT_EQ(c->mac->str(), "02:00:00:00:00:03");
  ASSERT_EQ(c->runtime_ips.size(), 2u);
  EXPECT_EQ(c->runtime_ips[1].str(), "fd00::5/64");
  EXPECT_EQ(c->device_info_file, "/var/run/k8s.cni.cncf.io/x.json");
}

TEST(NetConfTest, CniArgsMacOverridesTopLevel) {
  CniArgs args;
  args.mac = "02:00:00:00:00:02";
  auto c = parse(R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet", "master": "eth0",
    "mac": "02:00:00:00:00:01", "allowPodMac": true})",
                 Command::kAdd, args);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->mac->str(), "02:00:00:00:00:02");
}

// Multus writes the allocated device into deviceID and pciBusID, and into runtimeConfig.deviceID
// with the capability: the same address in both is not the pod's choice.
TEST(NetConfTest, TheAllocatedDeviceInBothPlacesIsNotAPodChoice) {
  auto c = parse(R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet",
    "deviceID": "0000:81:10.4", "pciBusID": "0000:81:10.4",
    "runtimeConfig": {"deviceID": "0000:81:10.4"}})");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_FALSE(c->pod_device_id.has_value());
  EXPECT_FALSE(c->allow_pod_mac);
  EXPECT_FALSE(c->allow_pod_ips);
}

// A pod's MAC without the opt-in: refused by ADD and CHECK, passed by DEL (which must finish).
TEST(NetConfTest, APodChosenMacIsRefusedOnAddAndPassedOnDel) {
  CniArgs args;
  args.mac = "02:00:00:00:00:02";
  const char* conf = R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet", "master": "e"})";
  auto add = parse(conf, Command::kAdd, args);
  ASSERT_FALSE(add.ok());
  EXPECT_EQ(add.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(add.error().msg.find("allowPodMac"), std::string::npos) << add.error().msg;
  EXPECT_TRUE(parse(conf, Command::kDel, args).ok());
}

TEST(NetConfTest, LosslessDefaultsToWarnAndSetsThePcp) {
  auto c = parse(R"({"cniVersion": "1.1.0", "name": "n", "type": "rdmanet", "master": "eth0",
    "vlan": 100, "lossless": {"priority": 3}})");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->lossless.has_value());
  EXPECT_EQ(c->lossless->priority, 3);
  EXPECT_EQ(c->lossless->check, LosslessCheck::kWarn);
  EXPECT_EQ(c->pcp(), 3);
}

TEST(NetConfTest, ReadsValidAttachmentsForGc) {
  auto c = parse(R"({"cniVersion": "1.1.0", "name": "n", "type": "rdmanet",
    "cni.dev/valid-attachments": [{"containerID": "a", "ifname": "net1"}]})",
                 Command::kGc);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_TRUE(c->has_valid_attachments);
  ASSERT_EQ(c->valid_attachments.size(), 1u);
  EXPECT_EQ(c->valid_attachments[0], (Attachment{"a", "net1"}));
}

TEST(NetConfTest, DelNeedsNoDeviceKeys) {
  EXPECT_TRUE(
      parse(R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet"})", Command::kDel).ok());
}

// An unknown word of an enum key: the error names the key, the word and every choice, with the
// code the key has always had (8 for what rdmanet does not implement, 7 for a malformed value).
TEST(NetConfTest, UnknownEnumWordsListTheChoices) {
  const std::string head = R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet", )";
  auto msgOf = [&](const std::string& keys, ErrorCode code) {
    auto c = parse(head + keys + "}");
    EXPECT_FALSE(c.ok()) << keys;
    if (c.ok()) return std::string();
    EXPECT_EQ(c.error().code, code) << keys;
    return c.error().msg;
  };
  EXPECT_EQ(msgOf(R"("master": "e", "mode": "ipvlan")", ErrorCode::kUnsupportedField),
            "unsupported value \"ipvlan\" for \"mode\" (supported: sriov, macvlan, host-device, "
            "bridge, private, vepa, passthru)");
  EXPECT_EQ(msgOf(R"("master": "e", "macvlanMode": "source")", ErrorCode::kUnsupportedField),
            "unsupported value \"source\" for \"macvlanMode\" (supported: bridge, private, vepa, "
            "passthru)");
  EXPECT_EQ(msgOf(R"("master": "e", "lossless": {"priority": 3, "check": "strict"})",
                  ErrorCode::kUnsupportedField),
            "unsupported value \"strict\" for \"lossless.check\" (supported: enforce, warn, off)");
  EXPECT_EQ(msgOf(R"("master": "e", "vlan": 5, "vlanProto": "802.1X")", ErrorCode::kInvalidConfig),
            "\"vlanProto\" must be \"802.1q\" or \"802.1ad\", not \"802.1X\"");
  EXPECT_EQ(msgOf(R"("master": "e", "spoofchk": "Yes")", ErrorCode::kInvalidConfig),
            "\"spoofchk\" must be \"on\" or \"off\", not \"Yes\"");
  EXPECT_EQ(msgOf(R"("master": "e", "link_state": "up")", ErrorCode::kInvalidConfig),
            "\"link_state\" must be \"auto\", \"enable\" or \"disable\", not \"up\"");
}

TEST(NetConfTest, OnOffAndVlanProtoReadInAnyCase) {
  auto c = parse(R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet", "master": "e",
                     "vlan": 5, "vlanProto": "802.1AD", "spoofchk": "ON", "trust": "False"})");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->vlan_proto, 0x88a8);
  EXPECT_EQ(c->spoofchk, true);
  EXPECT_EQ(c->trust, false);
}

struct BadConf {
  const char* name;
  std::string json;
  ErrorCode code;
  std::string needle;  // must appear in msg or details
  Command command = Command::kAdd;
};
void PrintTo(const BadConf& b, std::ostream* os) { *os << b.name; }

class BadNetConfTest : public ::testing::TestWithParam<BadConf> {};

TEST_P(BadNetConfTest, FailsWithTheRightCodeAndAUsefulMessage) {
  const BadConf& b = GetParam();
  auto c = parse(b.json, b.command);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, b.code) << c.error().msg;
  EXPECT_NE((c.error().msg + c.error().details).find(b.needle), std::string::npos)
      << c.error().msg << " / " << c.error().details;
}

#define HEAD R"("cniVersion": "1.0.0", "name": "n", "type": "rdmanet", )"
INSTANTIATE_TEST_SUITE_P(
    Battery, BadNetConfTest,
    ::testing::Values(
        BadConf{"MalformedJson", "{\"cniVersion\": ", ErrorCode::kDecodeFailure, "parse"},
        BadConf{"NotAnObject", "[1,2]", ErrorCode::kInvalidConfig, "object"},
        BadConf{"NoVersion", R"({"name": "n", "master": "e"})", ErrorCode::kInvalidConfig,
                "cniVersion"},
        BadConf{"OldVersion", R"({"cniVersion": "0.2.0", "master": "e"})",
                ErrorCode::kIncompatibleVersion, "0.2.0"},
        BadConf{"FutureVersion", R"({"cniVersion": "2.0.0", "master": "e"})",
                ErrorCode::kIncompatibleVersion, "2.0.0"},
        BadConf{"CheckOn031", R"({"cniVersion": "0.3.1", "master": "e"})",
                ErrorCode::kIncompatibleVersion, "CHECK", Command::kCheck},
        BadConf{"GcOn100", R"({"cniVersion": "1.0.0"})", ErrorCode::kIncompatibleVersion, "GC",
                Command::kGc},
        BadConf{"VlanAsString", "{" HEAD R"("master": "e", "vlan": "100"})",
                ErrorCode::kInvalidConfig, "vlan"},
        BadConf{"VlanAsFloat", "{" HEAD R"("master": "e", "vlan": 100.5})",
                ErrorCode::kInvalidConfig, "vlan"},
        BadConf{"VlanTooBig", "{" HEAD R"("master": "e", "vlan": 4095})", ErrorCode::kInvalidConfig,
                "vlan"},
        BadConf{"VlanNegative", "{" HEAD R"("master": "e", "vlan": -1})", ErrorCode::kInvalidConfig,
                "vlan"},
        BadConf{"QosTooBig", "{" HEAD R"("master": "e", "vlan": 5, "vlanQoS": 8})",
                ErrorCode::kInvalidConfig, "vlanQoS"},
        BadConf{"QosWithoutVlan", "{" HEAD R"("master": "e", "vlanQoS": 3})",
                ErrorCode::kInvalidConfig, "vlanQoS"},
        BadConf{"BadVlanProto", "{" HEAD R"("master": "e", "vlan": 5, "vlanProto": "qinq"})",
                ErrorCode::kInvalidConfig, "vlanProto"},
        BadConf{"MtuTooSmall", "{" HEAD R"("master": "e", "mtu": 67})", ErrorCode::kInvalidConfig,
                "mtu"},
        BadConf{"MtuTooBig", "{" HEAD R"("master": "e", "mtu": 70000})", ErrorCode::kInvalidConfig,
                "mtu"},
        BadConf{"MtuAsString", "{" HEAD R"("master": "e", "mtu": "9000"})",
                ErrorCode::kInvalidConfig, "mtu"},
        BadConf{"BadMac", "{" HEAD R"("master": "e", "mac": "02:00:00:00:00"})",
                ErrorCode::kInvalidConfig, "mac"},
        BadConf{"MulticastMac", "{" HEAD R"("master": "e", "mac": "01:00:5e:00:00:01"})",
                ErrorCode::kInvalidConfig, "mac"},
        BadConf{"UnknownMode", "{" HEAD R"("master": "e", "mode": "ipvlan"})",
                ErrorCode::kUnsupportedField, "mode"},
        BadConf{"UnknownMacvlanMode", "{" HEAD R"("master": "e", "macvlanMode": "source"})",
                ErrorCode::kUnsupportedField, "macvlanMode"},
        BadConf{"ModeContradiction",
                "{" HEAD R"("master": "e", "mode": "vepa", "macvlanMode": "bridge"})",
                ErrorCode::kInvalidConfig, "macvlanMode"},
        BadConf{"DeviceIdNotPci", "{" HEAD R"("deviceID": "eth0"})", ErrorCode::kInvalidConfig,
                "deviceID"},
        BadConf{"DeviceIdTraversal", "{" HEAD R"("deviceID": "../../../etc/passwd"})",
                ErrorCode::kInvalidConfig, "deviceID"},
        BadConf{"DeviceIdTraversalSuffix", "{" HEAD R"("deviceID": "0000:81:00.0/../x"})",
                ErrorCode::kInvalidConfig, "deviceID"},
        BadConf{"RuntimeDeviceIdBad", "{" HEAD R"("runtimeConfig": {"deviceID": "x"}})",
                ErrorCode::kInvalidConfig, "deviceID"},
        BadConf{"PciBusIdBad", "{" HEAD R"("pciBusID": "0000:zz:00.0"})", ErrorCode::kInvalidConfig,
                "pciBusID"},
        BadConf{"DeviceNameTooLong", "{" HEAD R"("device": "abcdefghijklmnopq"})",
                ErrorCode::kInvalidConfig, "device"},
        BadConf{"MasterWithSlash", "{" HEAD R"("master": "../eth0"})", ErrorCode::kInvalidConfig,
                "master"},
        BadConf{"IpamTypeWithSlash", "{" HEAD R"("master": "e", "ipam": {"type": "../../bin/sh"}})",
                ErrorCode::kInvalidConfig, "ipam.type"},
        BadConf{"IpamTypeAbsolute", "{" HEAD R"("master": "e", "ipam": {"type": "/bin/sh"}})",
                ErrorCode::kInvalidConfig, "ipam.type"},
        BadConf{"IpamWithoutType", "{" HEAD R"("master": "e", "ipam": {"subnet": "10.0.0.0/8"}})",
                ErrorCode::kInvalidConfig, "ipam.type"},
        BadConf{"IpamNotObject", "{" HEAD R"("master": "e", "ipam": "host-local"})",
                ErrorCode::kInvalidConfig, "ipam"},
        BadConf{"SpoofchkBadValue", "{" HEAD R"("deviceID": "0000:81:10.0", "spoofchk": "yes"})",
                ErrorCode::kInvalidConfig, "spoofchk"},
        BadConf{"LinkStateBad", "{" HEAD R"("deviceID": "0000:81:10.0", "link_state": "up"})",
                ErrorCode::kInvalidConfig, "link_state"},
        BadConf{"RatesInverted",
                "{" HEAD R"("deviceID": "0000:81:10.0", "min_tx_rate": 10, "max_tx_rate": 5})",
                ErrorCode::kInvalidConfig, "min_tx_rate"},
        BadConf{"LosslessNoPriority", "{" HEAD R"("master": "e", "lossless": {}})",
                ErrorCode::kInvalidConfig, "priority"},
        BadConf{"LosslessPriorityTooBig", "{" HEAD R"("master": "e", "lossless": {"priority": 8}})",
                ErrorCode::kInvalidConfig, "priority"},
        BadConf{"LosslessBadCheck",
                "{" HEAD R"("master": "e", "lossless": {"priority": 3, "check": "strict"}})",
                ErrorCode::kUnsupportedField, "check"},
        BadConf{"QosDiffersFromLossless",
                "{" HEAD R"("master": "e", "vlan": 5, "vlanQoS": 2, "lossless": {"priority": 3}})",
                ErrorCode::kInvalidConfig, "vlanQoS"},
        BadConf{"RdmaNotBool", "{" HEAD R"("master": "e", "rdma": "no"})",
                ErrorCode::kInvalidConfig, "rdma"},
        BadConf{"RelativeLogFile", "{" HEAD R"("master": "e", "logFile": "x.log"})",
                ErrorCode::kInvalidConfig, "logFile"},
        BadConf{"DeviceInfoTraversal",
                "{" HEAD R"("master": "e", "runtimeConfig": {"CNIDeviceInfoFile": "/a/../b"}})",
                ErrorCode::kInvalidConfig, "CNIDeviceInfoFile"},
        BadConf{"RuntimeIpsBad",
                "{" HEAD R"("master": "e", "runtimeConfig": {"ips": ["10.0.0.1"]}})",
                ErrorCode::kInvalidConfig, "ips"},
        BadConf{"SriovWithoutDeviceId", "{" HEAD R"("mode": "sriov"})", ErrorCode::kInvalidConfig,
                "deviceID"},
        BadConf{"MacvlanWithoutMaster", "{" HEAD R"("mode": "macvlan"})", ErrorCode::kInvalidConfig,
                "master"},
        BadConf{"NoDeviceAtAll", "{" HEAD R"("mtu": 1500})", ErrorCode::kInvalidConfig, "required"},
        BadConf{"KernelPath", "{" HEAD R"("kernelpath": "/sys/devices/x"})",
                ErrorCode::kUnsupportedField, "kernelpath"},
        BadConf{"PrevResultNotObject", "{" HEAD R"("master": "e", "prevResult": 3})",
                ErrorCode::kInvalidConfig, "prevResult"}),
    [](const auto& info) { return info.param.name; });
#undef HEAD

TEST(NetConfTest, PlainFileNames) {
  EXPECT_TRUE(isPlainFileName("host-local"));
  EXPECT_FALSE(isPlainFileName("a/b"));
  EXPECT_FALSE(isPlainFileName(".."));
  EXPECT_FALSE(isPlainFileName(""));
  EXPECT_FALSE(isPlainFileName("a b"));
  EXPECT_FALSE(isPlainFileName(std::string("a\nb")));
}

}  // namespace
}  // namespace rdmanet::cni
