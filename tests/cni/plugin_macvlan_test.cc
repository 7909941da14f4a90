// macvlan and host-device modes over the fake kernel, and the lossless check's policies.
#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <optional>

#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

class MacvlanTest : public PluginTest {};

TEST_F(MacvlanTest, AddCreatesTheMacvlanInsideThePod) {
  const json out = addOk(macvlanConf(R"(, "mac": "02:00:00:00:00:07")"));
  auto l = kernel_.link("pod1", "net1");
  ASSERT_TRUE(l.has_value()) << dumpWorld(world());
  EXPECT_EQ(l->info.kind, "macvlan");
  EXPECT_EQ(l->macvlan_mode, MacvlanMode::kBridge);
  EXPECT_EQ(l->info.mtu, 1400u);
  EXPECT_EQ(l->info.mac.str(), "02:00:00:00:00:07");
  EXPECT_EQ(l->info.parent_ifindex, pf_ifindex_);
  EXPECT_EQ(out["interfaces"][0]["mac"], "02:00:00:00:00:07");
  EXPECT_EQ(out["ips"][0]["interface"], 0);
  EXPECT_FALSE(out["ips"][0].contains("version"));  // 1.0.0
}

TEST_F(MacvlanTest, EachReferenceSubModeIsHonoured) {
  const std::pair<const char*, MacvlanMode> modes[] = {{"private", MacvlanMode::kPrivate},
                                                       {"vepa", MacvlanMode::kVepa},
                                                       {"passthru", MacvlanMode::kPassthru}};
  int i = 0;
  for (const auto& [name, mode] : modes) {
    const std::string cid = "m" + std::to_string(i++);
    const std::string conf = R"({"cniVersion": "1.0.0", "name": "mv", "type": "rdmanet",
      "master": "ens2f0", "mode": ")" +
                             std::string(name) + R"("})";
    addOk(conf, kPod, cid);
    auto l = kernel_.link("pod1", "net1");
    ASSERT_TRUE(l.has_value()) << name;
    EXPECT_EQ(l->macvlan_mode, mode) << name;
    ASSERT_EQ(invoke("DEL", conf, kPod, cid).exit_code, 0);
  }
}

TEST_F(MacvlanTest, VlanSharesOneHostVlanDeviceWithTheLosslessEgressMap) {
  const std::string conf = macvlanConf(R"(, "vlan": 100, "lossless": {"priority": 3})");
  addOk(conf, kPod, "c1");
  addOk(conf, kPod2, "c2");
  auto v = kernel_.link(FakeKernel::kHost, "ens1f0.100");
  ASSERT_TRUE(v.has_value()) << dumpWorld(world());
  EXPECT_EQ(v->info.kind, "vlan");
  EXPECT_EQ(v->vlan_id, 100);
  EXPECT_TRUE(v->info.admin_up);
  ASSERT_EQ(v->egress_qos.size(), 8u);
  for (uint32_t p = 0; p < 8; ++p) EXPECT_EQ(v->egress_qos[p], std::make_pair(p, 3u));
  EXPECT_EQ(kernel_.link("pod1", "net1")->info.parent_ifindex, v->info.ifindex);
  EXPECT_EQ(kernel_.link("pod2", "net1")->info.parent_ifindex, v->info.ifindex);

  ASSERT_EQ(invoke("DEL", conf, kPod, "c1").exit_code, 0);
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value());  // c2 still uses it
  ASSERT_EQ(invoke("DEL", conf, kPod, "c1").exit_code, 0);                 // a repeated DEL
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value());
  ASSERT_EQ(invoke("DEL", conf, kPod2, "c2").exit_code, 0);
  EXPECT_FALSE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value());
  EXPECT_TRUE(world().state_files.empty()) << dumpWorld(world());
}

TEST_F(MacvlanTest, AnAdminsVlanDeviceIsNeverDeleted) {
  FakeLinkSpec spec;
  spec.name = "ens1f0.100";
  spec.kind = "vlan";
  spec.parent_ifindex = pf_ifindex_;
  kernel_.addLink(FakeKernel::kHost, spec);
  const std::string conf = macvlanConf(R"(, "vlan": 100)");
  addOk(conf);
  ASSERT_EQ(invoke("DEL", conf).exit_code, 0);
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value());
}

// ADD looks up the master's PCI function, NUMA node and RDMA device only for the device-info
// file (cni/modes/resolve.cc skips that sysfs walk without one); with one, they are all reported.
TEST_F(MacvlanTest, DeviceInfoNamesTheMastersFunctionNumaNodeAndSharedHca) {
  const std::string conf = macvlanConf(R"(, "runtimeConfig": {"CNIDeviceInfoFile": ")" +
                                       (tmp_.path() / "devinfo/d.json").string() + "\"}");
  addOk(conf);
  std::ifstream in(tmp_.path() / "devinfo/d.json");
  const json d = json::parse(in);
  EXPECT_EQ(d["pci"]["pci-address"], "0000:81:00.0") << d.dump();
  EXPECT_EQ(d["pci"]["rdma-device"], "mlx5_0") << d.dump();
  EXPECT_EQ(d["rdmanet"]["numa-node"], 1) << d.dump();
  EXPECT_EQ(d["rdmanet"]["mode"], "macvlan");
  ASSERT_EQ(invoke("DEL", conf).exit_code, 0);
  EXPECT_TRUE(world().state_files.empty()) << dumpWorld(world());
}

TEST_F(MacvlanTest, AMissingMasterIs100AndStatusIs50) {
  const std::string conf = R"({"cniVersion": "1.1.0", "name": "mv", "type": "rdmanet",
    "master": "nope0"})";
  const Invocation add = invoke("ADD", conf);
  ASSERT_NE(add.exit_code, 0);
  EXPECT_EQ(json::parse(add.stdout_data)["code"], 100);
  const Invocation st = invoke("STATUS", conf, "", "", "");
  EXPECT_EQ(json::parse(st.stdout_data)["code"], 50);
}

TEST_F(MacvlanTest, StatusIs51WhenTheMasterIsDownAndOkWhenUp) {
  const std::string conf = R"({"cniVersion": "1.1.0", "name": "mv", "type": "rdmanet",
    "master": "ens1f0"})";
  EXPECT_EQ(invoke("STATUS", conf, "", "", "").exit_code, 0);
  kernel_.setCarrier(FakeKernel::kHost, "ens1f0", false);
  const Invocation st = invoke("STATUS", conf, "", "", "");
  ASSERT_NE(st.exit_code, 0);
  EXPECT_EQ(json::parse(st.stdout_data)["code"], 51);
}

TEST_F(MacvlanTest, DelWhenTheNetnsIsGoneSucceeds) {
  const std::string conf = macvlanConf(R"(, "vlan": 100)");
  addOk(conf);
  kernel_.deleteNetns("pod1");
  const Invocation del = invoke("DEL", conf, kPod);
  EXPECT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_FALSE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value());
  EXPECT_TRUE(world().state_files.empty());
  EXPECT_TRUE(world().leases.empty());
}

TEST_F(MacvlanTest, AddOnTopOfAPrevResultKeepsThePreviousInterfaces) {
  const json prev = json::parse(R"({"cniVersion": "1.0.0",
    "interfaces": [{"name": "eth0", "sandbox": "/var/run/netns/pod1"}],
    "ips": [{"address": "192.168.0.5/24", "interface": 0}]})");
  const json out = addOk(withPrev(macvlanConf(), prev));
  ASSERT_EQ(out["interfaces"].size(), 2u);
  EXPECT_EQ(out["interfaces"][1]["name"], "net1");
  EXPECT_EQ(out["ips"][1]["interface"], 1);
  EXPECT_EQ(out["ips"][0]["address"], "192.168.0.5/24");
}

TEST_F(MacvlanTest, CheckFindsAMissingAddress) {
  const json out = addOk(macvlanConf());
  EXPECT_EQ(invoke("CHECK", withPrev(macvlanConf(), out)).exit_code, 0);
  ASSERT_TRUE(runner_
                  .run(kPod,
                       [](Netlink& nl) -> Status {
                         RDMANET_ASSIGN_OR_RETURN(auto l, nl.linkByName("net1"));
                         return nl.deleteAddress(l.ifindex, *IpPrefix::parse("10.56.0.2/24"));
                       })
                  .ok());
  const Invocation bad = invoke("CHECK", withPrev(macvlanConf(), out));
  ASSERT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.stdout_data.find("10.56.0.2/24"), std::string::npos) << bad.stdout_data;
}

TEST_F(MacvlanTest, CheckWithoutPrevResultIs7) {
  addOk(macvlanConf());
  const Invocation out = invoke("CHECK", macvlanConf());
  ASSERT_NE(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data)["code"], 7);
}

TEST_F(MacvlanTest, GcReleasesOnlyAttachmentsMissingFromTheValidList) {
  ipam_.highest = "1.1.0";  // a delegate that knows GC
  addOk(macvlanConf(), kPod, "keep");
  addOk(macvlanConf(), kPod2, "stale");
  json gc = json::parse(macvlanConf());
  gc["cniVersion"] = "1.1.0";
  gc["cni.dev/valid-attachments"] = json::array({{{"containerID", "keep"}, {"ifname", "net1"}}});
  const Invocation out = invoke("GC", gc.dump(), "", "", "");
  ASSERT_EQ(out.exit_code, 0) << out.stdout_data;
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
  EXPECT_FALSE(kernel_.link("pod2", "net1").has_value());
  EXPECT_EQ(ipam_.live.count("keep_net1"), 1u);
  EXPECT_EQ(ipam_.live.count("stale_net1"), 0u);
  EXPECT_EQ(ipam_.count("GC"), 1);  // forwarded to the delegate
}

TEST(MacvlanRollbackTest, AddWithVlanRollsBackAfterAFailureAtEveryStep) {
  int mutations = 0;
  std::string conf;
  {
    TestNode n;
    conf = n.macvlanConf(R"(, "vlan": 100, "lossless": {"priority": 3, "check": "enforce"})");
    const int start = n.kernel_.mutations();
    n.addOk(conf);
    mutations = n.kernel_.mutations() - start;
  }
  ASSERT_GE(mutations, 4);
  for (int i = 1; i <= mutations; ++i) {
    TestNode n;
    const TestNode::World before = n.world();
    n.kernel_.failMutation(i, EIO);
    EXPECT_NE(n.invoke("ADD", conf).exit_code, 0) << "mutation " << i;
    n.kernel_.clearFaults();
    EXPECT_EQ(n.world(), before) << "mutation " << i << ":\n" << dumpWorld(n.world());
  }
}

// A shared PF as consumable capacity (issue 32 §3): the pod's claim of the PF (Multus passes it
// as deviceID) records its share as "maxTxRateMbps"; ADD shapes the macvlan's egress to it with a
// TBF root qdisc and says RoCE bypasses it, CHECK reports a drift, DEL leaves nothing.
class MacvlanShareTest : public PluginTest {
 protected:
  static constexpr const char* kPodUid = "9d3f0c2e-5b1a-4c7e-8f00-0a1b2c3d4e5f";

  std::string shareConf() const {
    return macvlanConf(fmt::format(
        R"(, "deviceID": "0000:81:00.0", "draDevicesDir": "{}", "resourceName": "rdma/shared")",
        draRecords().string()));
  }
  void claimPf(const json& share) const {
    writeDraRecord(
        kPodUid, "a-claim",
        json::array({draDevice("rdma/shared", "0000:81:00.0", {{"maxTxRateMbps", share}})}));
  }
  Invocation run(const std::string& command, const std::string& conf) {
    return invoke(command, conf, kPod, "c1", "net1",
                  {{"CNI_ARGS", fmt::format("IgnoreUnknown=1;K8S_POD_UID={}", kPodUid)}});
  }
};

TEST_F(MacvlanShareTest, AddShapesTheEgressToTheShareCheckSeesADriftAndDelLeavesNothing) {
  claimPf(50'000);
  const World before = world();
  const Invocation add = run("ADD", shareConf());
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  auto l = kernel_.link("pod1", "net1");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->egress_rate_mbps, std::optional<uint64_t>(50'000));
  const std::string log = logText();
  EXPECT_NE(log.find("the pod's net1 egress is shaped to 50000 Mbit/s"), std::string::npos) << log;
  EXPECT_NE(log.find("RDMA (RoCE) traffic from the HCA bypasses the qdisc and is not shaped"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("NOT enforced"), std::string::npos) << log;

  const json out = json::parse(add.stdout_data);
  const Invocation ok = run("CHECK", withPrev(shareConf(), out));
  EXPECT_EQ(ok.exit_code, 0) << ok.stdout_data;
  FakeNetlink pod(kernel_, "pod1");
  ASSERT_TRUE(pod.setEgressRate(l->info.ifindex, 10'000).ok());  // someone changed it
  const Invocation drift = run("CHECK", withPrev(shareConf(), out));
  EXPECT_NE(drift.exit_code, 0);
  EXPECT_NE(drift.stdout_data.find("egress shaped to 10000 Mbit/s (want 50000 Mbit/s"),
            std::string::npos)
      << drift.stdout_data;

  const Invocation del = run("DEL", withPrev(shareConf(), out));
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(world(), before) << dumpWorld(world()) << "\n--- want\n" << dumpWorld(before);
}

// Without deviceID (a Multus before 4.3.1 passes none), the claim that holds the master's own
// function gives the share: a shared pool's PF is the master.
TEST_F(MacvlanShareTest, WithoutDeviceIdTheMastersClaimGivesTheShare) {
  claimPf(40'000);
  const std::string conf = macvlanConf(fmt::format(
      R"(, "draDevicesDir": "{}", "resourceName": "rdma/shared")", draRecords().string()));
  const Invocation add = run("ADD", conf);
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_EQ(kernel_.link("pod1", "net1")->egress_rate_mbps, std::optional<uint64_t>(40'000));
  const Invocation check = run("CHECK", withPrev(conf, json::parse(add.stdout_data)));
  EXPECT_EQ(check.exit_code, 0) << check.stdout_data;
}

TEST_F(MacvlanShareTest, WithoutAShareTheEgressIsLeftAlone) {
  const Invocation add = run("ADD", shareConf());  // no record for the pod
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_EQ(kernel_.link("pod1", "net1")->egress_rate_mbps, std::nullopt);
  EXPECT_EQ(run("CHECK", withPrev(shareConf(), json::parse(add.stdout_data))).exit_code, 0);
}

TEST_F(MacvlanShareTest, AQdiscTheKernelRefusesFailsAddAndLeavesNothing) {
  claimPf(50'000);
  const World before = world();
  kernel_.failCall(FakeOp::kSetEgressRate, EPERM);
  const Invocation add = run("ADD", shareConf());
  ASSERT_NE(add.exit_code, 0);
  const json err = json::parse(add.stdout_data);
  EXPECT_NE(err["msg"].get<std::string>().find(
                "shaping macvlan net1 to the 50000 Mbit/s the pod's DRA claim holds"),
            std::string::npos)
      << err;
  EXPECT_EQ(world(), before) << dumpWorld(world()) << "\n--- want\n" << dumpWorld(before);
}

class HostDeviceTest : public PluginTest {};

TEST_F(HostDeviceTest, AddMovesTheDeviceAndDelBringsItBackUnderItsName) {
  const World before = world();
  const json out = addOk(hostDeviceConf(R"(, "mtu": 9000)"));
  EXPECT_FALSE(kernel_.link(FakeKernel::kHost, "ens2f0").has_value());
  auto l = kernel_.link("pod1", "net1");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->info.mtu, 9000u);
  EXPECT_EQ(out["ips"][0]["version"], "4");  // 0.4.0 format
  ASSERT_EQ(invoke("DEL", hostDeviceConf(R"(, "mtu": 9000)")).exit_code, 0);
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

TEST_F(HostDeviceTest, ByPciAddress) {
  addOk(R"({"cniVersion": "1.1.0", "name": "hd", "type": "rdmanet", "pciBusID": "0000:82:00.0"})");
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
}

TEST_F(HostDeviceTest, VlanInsideThePodCarriesTheLosslessMap) {
  const std::string conf =
      hostDeviceConf(R"(, "vlan": 200, "lossless": {"priority": 5, "check": "off"})");
  const World before = world();
  const json out = addOk(conf);
  auto lower = kernel_.link("pod1", "ens2f0");
  auto vlan = kernel_.link("pod1", "net1");
  ASSERT_TRUE(lower && vlan) << dumpWorld(world());
  EXPECT_EQ(vlan->info.kind, "vlan");
  EXPECT_EQ(vlan->vlan_id, 200);
  EXPECT_EQ(vlan->info.parent_ifindex, lower->info.ifindex);
  ASSERT_EQ(vlan->egress_qos.size(), 8u);
  EXPECT_EQ(vlan->egress_qos[0].second, 5u);
  EXPECT_EQ(invoke("CHECK", withPrev(conf, out)).exit_code, 0);
  ASSERT_EQ(invoke("DEL", conf).exit_code, 0);
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

TEST(HostDeviceRollbackTest, AddRollsBackAfterAFailureAtEveryStep) {
  for (const std::string extra : {"", R"(, "vlan": 7, "mac": "02:00:00:00:00:09")"}) {
    int mutations = 0;
    {
      TestNode n;
      const int start = n.kernel_.mutations();
      n.addOk(n.hostDeviceConf(extra));
      mutations = n.kernel_.mutations() - start;
    }
    for (int i = 1; i <= mutations; ++i) {
      TestNode n;
      const TestNode::World before = n.world();
      n.kernel_.failMutation(i, EIO);
      EXPECT_NE(n.invoke("ADD", n.hostDeviceConf(extra)).exit_code, 0) << "mutation " << i;
      n.kernel_.clearFaults();
      EXPECT_EQ(n.world(), before) << extra << " mutation " << i << ":\n" << dumpWorld(n.world());
    }
  }
}

class LosslessPolicyTest : public PluginTest {};

TEST_F(LosslessPolicyTest, EnforceRejectsAPriorityWithoutPfcNamingPortPriorityAndSet) {
  const World before = world();
  const Invocation out = invoke(
      "ADD", macvlanConf(R"(, "vlan": 100, "lossless": {"priority": 4, "check": "enforce"})"));
  ASSERT_NE(out.exit_code, 0);
  const json err = json::parse(out.stdout_data);
  EXPECT_EQ(err["code"], 7);
  const std::string msg = err["msg"];
  EXPECT_NE(msg.find("ens1f0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("priority 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("{3}"), std::string::npos) << msg;
  EXPECT_EQ(world(), before);
}

TEST_F(LosslessPolicyTest, EnforceRejectsPcpTrustWithoutVlan) {
  const Invocation out =
      invoke("ADD", macvlanConf(R"(, "lossless": {"priority": 3, "check": "enforce"})"));
  ASSERT_NE(out.exit_code, 0);
  EXPECT_NE(out.stdout_data.find("VLAN"), std::string::npos) << out.stdout_data;
}

TEST_F(LosslessPolicyTest, EnforceRejectsAPortWithoutDcb) {
  kernel_.setDcb(FakeKernel::kHost, "ens1f0", std::nullopt);
  const Invocation out =
      invoke("ADD", macvlanConf(R"(, "vlan": 9, "lossless": {"priority": 3, "check": "enforce"})"));
  ASSERT_NE(out.exit_code, 0);
  EXPECT_NE(out.stdout_data.find("does not report DCB"), std::string::npos) << out.stdout_data;
}

TEST_F(LosslessPolicyTest, WarnProceedsAndLogs) {
  addOk(macvlanConf(R"(, "vlan": 100, "lossless": {"priority": 4})"));
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
  const std::string log = logText();
  EXPECT_NE(log.find("priority 4 is not PFC-enabled on port ens1f0"), std::string::npos) << log;
  EXPECT_NE(log.find("containerID=c1"), std::string::npos);
}

TEST_F(LosslessPolicyTest, DscpTrustNeedsADscpMappingToThePriority) {
  DcbState dcb;
  dcb.supported = true;
  dcb.pfc_enabled = 1 << 3;
  dcb.apps = {{.selector = 5, .priority = 3, .protocol = 26}};
  kernel_.setDcb(FakeKernel::kHost, "ens2f0", dcb);
  const std::string conf = hostDeviceConf(
      R"(, "lossless": {"priority": 3, "check": "enforce"},
      "runtimeConfig": {"CNIDeviceInfoFile": ")" +
      (tmp_.path() / "devinfo/d.json").string() + "\"}");
  // DSCP 26 -> priority 3: fine without a VLAN, and the DSCP reaches the device-info file.
  addOk(conf);
  std::ifstream in(tmp_.path() / "devinfo/d.json");
  const json d = json::parse(in);
  EXPECT_EQ(d["rdmanet"]["dscp"], 26);
  EXPECT_EQ(d["pci"]["pci-address"], "0000:82:00.0");
  ASSERT_EQ(invoke("DEL", conf).exit_code, 0);

  dcb.apps = {{.selector = 5, .priority = 2, .protocol = 16}};
  kernel_.setDcb(FakeKernel::kHost, "ens2f0", dcb);
  const Invocation out = invoke("ADD", conf);
  ASSERT_NE(out.exit_code, 0);
  EXPECT_NE(out.stdout_data.find("trusts DSCP"), std::string::npos) << out.stdout_data;
}

}  // namespace
}  // namespace rdmanet::cni::testing
