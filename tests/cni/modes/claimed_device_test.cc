// A pod's DRA-claimed device found by the CNI when Multus passes no deviceID
// (cni/modes/claimed_device.h): the records the device plugin's DRA front writes at prepare, read
// through whole invocations.
#include "cni/modes/claimed_device.h"

#include <fmt/format.h>

#include <fstream>

#include "common/dra/net_report.h"
#include "common/os/read_file.h"
#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPodUid = "9d3f0c2e-5b1a-4c7e-8f00-0a1b2c3d4e5f";

class ClaimedDeviceTest : public PluginTest {
 protected:
  fs::path records() const { return draRecords(); }
  // The daemon's record of one claim of the pod (deviceplugin/dra/kubelet/pod_devices.h).
  void writeRecord(const std::string& claim_uid, const json& devices) {
    writeDraRecord(kPodUid, claim_uid, devices);
  }
  static json device(const std::string& resource, const std::string& pci,
                     const json& extra = json::object()) {
    return draDevice(resource, pci, extra);
  }
  // sriovConf without deviceID, with the DRA keys.
  std::string claimConf() const {
    std::string c = sriovConf(
        fmt::format(R"(, "draDevicesDir": "{}", "resourceName": "rdma/vf")", records().string()));
    const std::string id = R"("deviceID": "0000:81:10.0",)";
    c.erase(c.find(id), id.size());
    return c;
  }
  Invocation run(const std::string& command, const std::string& conf,
                 const std::string& ifname = "net1", const std::string& uid = kPodUid) {
    return invoke(command, conf, kPod, "c1", ifname,
                  {{"CNI_ARGS", fmt::format("IgnoreUnknown=1;K8S_POD_UID={}", uid)}});
  }
};

TEST_F(ClaimedDeviceTest, AddWiresTheVfThePodsClaimHoldsWithoutADeviceId) {
  writeRecord("a-claim", json::array({device("rdma/other", "0000:81:10.2"),
                                      device("rdma/vf", "0000:81:10.0")}));
  const Invocation add = run("ADD", claimConf());
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_EQ(json::parse(add.stdout_data)["interfaces"][0]["pciID"], "0000:81:10.0");
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
  // CHECK finds the same device through the attachment ADD recorded.
  const Invocation check = run("CHECK", withPrev(claimConf(), json::parse(add.stdout_data)));
  EXPECT_EQ(check.exit_code, 0) << check.stdout_data;
  const Invocation del = run("DEL", withPrev(claimConf(), json::parse(add.stdout_data)));
  EXPECT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0v0").has_value());
}

TEST_F(ClaimedDeviceTest, AddWithoutADeviceIdCapsTheVfAtTheRecordsShare) {
  // The share of its port the claim holds (issue 32), below the NAD's max_tx_rate of 10000.
  writeRecord("a-claim",
              json::array({device("rdma/vf", "0000:81:10.0", {{"maxTxRateMbps", 2500}})}));
  const World before = world();
  const Invocation add = run("ADD", claimConf());
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_EQ(kernel_.link(FakeKernel::kHost, "ens1f0")->vfs[0].max_tx_rate, 2500u);
  ASSERT_EQ(run("DEL", withPrev(claimConf(), json::parse(add.stdout_data))).exit_code, 0);
  World after = world();
  EXPECT_EQ(after.vfs, before.vfs);
}

TEST_F(ClaimedDeviceTest, ASecondNetworkOfThePoolGetsTheNextClaimedDevice) {
  writeRecord("a-claim", json::array({device("rdma/vf", "0000:81:10.0")}));
  writeRecord("b-claim", json::array({device("rdma/vf", "0000:81:10.2")}));
  const Invocation first = run("ADD", claimConf(), "net1");
  ASSERT_EQ(first.exit_code, 0) << first.stdout_data;
  const Invocation second = run("ADD", claimConf(), "net2");
  ASSERT_EQ(second.exit_code, 0) << second.stdout_data;
  EXPECT_EQ(json::parse(first.stdout_data)["interfaces"][0]["pciID"], "0000:81:10.0");
  EXPECT_EQ(json::parse(second.stdout_data)["interfaces"][0]["pciID"], "0000:81:10.2");
  // A third has none left: a clear error, nothing attached.
  const World before = world();
  const Invocation third = run("ADD", claimConf(), "net3");
  EXPECT_NE(third.exit_code, 0);
  EXPECT_NE(third.stdout_data.find("attached already"), std::string::npos) << third.stdout_data;
  EXPECT_EQ(world(), before);
}

TEST_F(ClaimedDeviceTest, NoRecordOfThePoolIsAClearErrorThatLeavesNothing) {
  writeRecord("a-claim", json::array({device("rdma/other", "0000:81:10.0")}));
  const World before = world();
  const Invocation add = run("ADD", claimConf());
  EXPECT_EQ(add.exit_code, 1);
  const json err = json::parse(add.stdout_data);
  EXPECT_EQ(err["code"], 100);
  EXPECT_NE(err["msg"].get<std::string>().find("no DRA claim of pod"), std::string::npos);
  EXPECT_NE(err["details"].get<std::string>().find("--dra-pod-devices-dir"), std::string::npos);
  EXPECT_EQ(world(), before);
}

TEST_F(ClaimedDeviceTest, APodUidThatCouldEscapeTheDirectoryIsRefused) {
  for (const char* uid : {"../../etc", "a/b", ".."}) {
    const Invocation add = run("ADD", claimConf(), "net1", uid);
    EXPECT_NE(add.exit_code, 0) << uid;
    EXPECT_NE(add.stdout_data.find("is not a pod UID"), std::string::npos) << add.stdout_data;
  }
}

TEST_F(ClaimedDeviceTest, DraDevicesDirNeedsAResourceNameAndASafePath) {
  std::string conf = claimConf();
  conf.erase(conf.find(R"(, "resourceName": "rdma/vf")"), 27);
  Invocation add = run("ADD", conf);
  EXPECT_NE(add.stdout_data.find("needs \\\"resourceName\\\""), std::string::npos)
      << add.stdout_data;
  add = run("ADD", sriovConf(R"(, "draDevicesDir": "rel/dir", "resourceName": "rdma/vf")"));
  EXPECT_NE(add.stdout_data.find("draDevicesDir"), std::string::npos) << add.stdout_data;
}

// The records' directory is a NAD's choice (issue 29: NAD authors get no root file operations):
// beneath the node's draDevicesRoot, and never through a symlink, for reading the records and
// for writing the network report alike.
TEST_F(ClaimedDeviceTest, ADraDevicesDirOutsideItsRootOrThroughASymlinkIsRefused) {
  deps_->node.dra_devices_root = (tmp_.path() / "run").string();
  // Records and a pod dir in place elsewhere, reached through a symlink below the root.
  writeRecord("a-claim", json::array({device("rdma/vf", "0000:81:10.0")}));
  fs::create_directories(tmp_.path() / "run");
  fs::create_symlink(records(), tmp_.path() / "run" / "dra-devices");
  for (const fs::path& dir : {records(), tmp_.path() / "run" / "dra-devices"}) {
    std::string conf = claimConf();
    conf.replace(conf.find(records().string()), records().string().size(), dir.string());
    const World before = world();
    const Invocation add = run("ADD", conf);
    ASSERT_EQ(add.exit_code, 1) << dir << ": " << add.stdout_data;
    EXPECT_NE(add.stdout_data.find(dir == records() ? "not beneath" : "symlink"), std::string::npos)
        << add.stdout_data;
    EXPECT_EQ(world(), before) << dir << ": " << dumpWorld(world());
  }
  // With the deviceID given, nothing is read or written through the symlink either: no report.
  std::string given = sriovConf(fmt::format(R"(, "draDevicesDir": "{}", "resourceName": "rdma/vf")",
                                            (tmp_.path() / "run" / "dra-devices").string()));
  const Invocation given_add = run("ADD", given);
  ASSERT_EQ(given_add.exit_code, 0) << given_add.stdout_data;
  EXPECT_FALSE(fs::exists(records() / kPodUid / "a-claim.d.net"));
  ASSERT_EQ(run("DEL", withPrev(given, json::parse(given_add.stdout_data))).exit_code, 0);
  // The same records beneath the root, reached without a symlink: found, and reported on.
  fs::remove(tmp_.path() / "run" / "dra-devices");
  fs::rename(records(), tmp_.path() / "run" / "dra-devices");
  std::string conf = claimConf();
  conf.replace(conf.find(records().string()), records().string().size(),
               (tmp_.path() / "run" / "dra-devices").string());
  const Invocation add = run("ADD", conf);
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_TRUE(fs::exists(tmp_.path() / "run" / "dra-devices" / kPodUid / "a-claim.d.net"));
}

TEST_F(ClaimedDeviceTest, ADeviceIdFromMultusWinsOverTheRecords) {
  writeRecord("a-claim", json::array({device("rdma/vf", "0000:81:10.2")}));
  const Invocation add =
      run("ADD", sriovConf(fmt::format(R"(, "draDevicesDir": "{}", "resourceName": "rdma/vf")",
                                       records().string())));
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_EQ(json::parse(add.stdout_data)["interfaces"][0]["pciID"], "0000:81:10.0");
}

// The network report (cni/modes/claim_report.h): what ADD made of the claim's device, for the
// daemon to write into the claim's status.
TEST_F(ClaimedDeviceTest, AddReportsTheInterfaceItsAddressesAndMacAndDelWithdrawsIt) {
  writeRecord("a-claim", json::array({device("rdma/vf", "0000:81:10.0")}));
  const fs::path report = records() / kPodUid / "a-claim.d.net";
  const Invocation add = run("ADD", claimConf());
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  auto text = readFile(report, 4096);
  ASSERT_TRUE(text.ok() && *text) << report;
  EXPECT_EQ((fs::status(report).permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write);
  auto r = dra::parseNetReport(**text);
  ASSERT_TRUE(r.ok()) << r.error().msg << " " << **text;
  EXPECT_EQ(r->container_id, "c1");
  EXPECT_EQ(r->interface_name, "net1");
  EXPECT_EQ(r->ips, std::vector<std::string>{"10.56.0.2/24"});
  EXPECT_EQ(r->hardware_address, "02:00:00:aa:00:01");
  EXPECT_TRUE(r->ready());
  const Invocation del = run("DEL", withPrev(claimConf(), json::parse(add.stdout_data)));
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_FALSE(fs::exists(report));
  // The record itself is the daemon's: DEL leaves it.
  EXPECT_TRUE(fs::exists(records() / kPodUid / "a-claim.json"));
}

TEST_F(ClaimedDeviceTest, AFailedAddReportsItsErrorAndItsDelLeavesTheReport) {
  writeRecord("a-claim", json::array({device("rdma/vf", "0000:81:10.0")}));
  ipam_.fail = json{{"cniVersion", "1.0.0"}, {"code", 11}, {"msg", "pool exhausted"}};
  const Invocation add = run("ADD", claimConf());
  ASSERT_NE(add.exit_code, 0);
  const fs::path report = records() / kPodUid / "a-claim.d.net";
  auto text = readFile(report, 4096);
  ASSERT_TRUE(text.ok() && *text) << report;
  auto r = dra::parseNetReport(**text);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_FALSE(r->ready());
  EXPECT_EQ(r->error_code, 11);
  EXPECT_NE(r->error_message.find("pool exhausted"), std::string::npos) << r->error_message;
  // The runtime's DEL after the failed ADD: the failure stays what the claim says.
  EXPECT_EQ(run("DEL", claimConf()).exit_code, 0);
  EXPECT_TRUE(fs::exists(report));
  // A later ADD that succeeds replaces it.
  ipam_.fail.reset();
  ASSERT_EQ(run("ADD", claimConf()).exit_code, 0);
  r = dra::parseNetReport(**readFile(report, 4096));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ready());
}

TEST_F(ClaimedDeviceTest, ADeviceNoRecordNamesGetsNoReport) {
  // deviceID from the NAD, no claim of the pod holds it: nothing to report, nothing written.
  writeRecord("a-claim", json::array({device("rdma/vf", "0000:81:10.2")}));
  const Invocation add =
      run("ADD", sriovConf(fmt::format(R"(, "draDevicesDir": "{}", "resourceName": "rdma/vf")",
                                       records().string())));
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  for (const auto& e : fs::directory_iterator(records() / kPodUid)) {
    EXPECT_EQ(e.path().extension(), ".json") << e.path();
  }
}

TEST(ClaimedDevice, RecordsThatDoNotParseAreSkipped) {
  sim::TempDir tmp;
  fs::create_directories(tmp.path() / kPodUid);
  std::ofstream(tmp.path() / kPodUid / "a.json") << "{not json";
  std::ofstream(tmp.path() / kPodUid / "b.json")
      << R"({"devices": [{"resourceName": "rdma/vf", "pciAddress": "0000:81:10.2"}]})";
  auto pci = claimedDevice({.root = tmp.path().string(), .dir = tmp.path().string()}, kPodUid,
                           "rdma/vf", {});
  ASSERT_TRUE(pci.ok()) << pci.error().msg;
  EXPECT_EQ(pci->str(), "0000:81:10.2");
}

// The share of its port a record gives a device ("maxTxRateMbps"), as claimOfDevice reads it: a
// bad value leaves the share unknown and says why, and the rest of the record stands.
struct RateCase {
  std::string name;
  std::string field;  // the device's "maxTxRateMbps" member, "" for none
  std::optional<uint32_t> rate;
  std::string problem;  // a fragment of rate_problem, "" for none
};

class ClaimedRateTest : public ::testing::TestWithParam<RateCase> {};

TEST_P(ClaimedRateTest, TheRecordsMaxTxRateIsTheDevicesShare) {
  const RateCase& c = GetParam();
  sim::TempDir tmp;
  fs::create_directories(tmp.path() / kPodUid);
  std::ofstream(tmp.path() / kPodUid / "a-claim.json") << fmt::format(
      R"({{"devices": [{{"resourceName": "rdma/vf", "pciAddress": "0000:81:10.2",
          "device": "pci-0000-81-10-2"{}}}]}})",
      c.field.empty() ? "" : ", \"maxTxRateMbps\": " + c.field);
  auto ref = claimOfDevice({.root = tmp.path().string(), .dir = tmp.path().string()}, kPodUid,
                           *PciAddress::parse("0000:81:10.2"));
  ASSERT_TRUE(ref.ok()) << ref.error().msg;
  ASSERT_TRUE(ref->has_value());
  EXPECT_EQ((*ref)->claim_uid, "a-claim");
  EXPECT_EQ((*ref)->device, "pci-0000-81-10-2");
  EXPECT_EQ((*ref)->max_tx_rate_mbps, c.rate);
  if (c.problem.empty()) {
    EXPECT_EQ((*ref)->rate_problem, "");
  } else {
    EXPECT_NE((*ref)->rate_problem.find(c.problem), std::string::npos) << (*ref)->rate_problem;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Records, ClaimedRateTest,
    ::testing::Values(RateCase{"Valid", "25000", 25000, ""}, RateCase{"Absent", "", {}, ""},
                      RateCase{"Null", "null", {}, ""},
                      RateCase{"LargestAllowed", "10000000", 10'000'000, ""},
                      RateCase{"Zero", "0", {}, "maxTxRateMbps"},
                      RateCase{"AboveTenTerabits", "10000001", {}, "out of range"},
                      RateCase{"Negative", "-5", {}, "out of range"},
                      RateCase{"AString", "\"25G\"", {}, "maxTxRateMbps"},
                      RateCase{"AFloat", "2.5", {}, "maxTxRateMbps"}),
    [](const ::testing::TestParamInfo<RateCase>& i) { return i.param.name; });

}  // namespace
}  // namespace rdmanet::cni::testing
