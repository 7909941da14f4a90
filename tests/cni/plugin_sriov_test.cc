// sriov mode over the fake kernel: ADD, DEL, rollback at every step, refused knobs, RDMA, the
// device-info file.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "cni/state/device_lock.h"
#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

class SriovTest : public PluginTest {};

TEST_F(SriovTest, AddAppliesVfKnobsThroughThePfAndMovesTheVfIntoThePod) {
  const json out = addOk(sriovConf());
  auto pod = kernel_.link("pod1", "net1");
  ASSERT_TRUE(pod.has_value()) << dumpWorld(world());
  EXPECT_EQ(pod->info.mtu, 9000u);
  EXPECT_EQ(pod->info.mac.str(), "02:00:00:aa:00:01");
  EXPECT_TRUE(pod->info.admin_up);
  EXPECT_FALSE(kernel_.link(FakeKernel::kHost, "ens1f0v0").has_value());
  const VfInfo vf = kernel_.link(FakeKernel::kHost, "ens1f0")->vfs[0];
  EXPECT_EQ(vf.vlan, 100);
  EXPECT_EQ(vf.qos, 3);  // the lossless priority, carried as PCP (VST)
  EXPECT_FALSE(vf.spoofchk);
  EXPECT_TRUE(vf.trust);
  EXPECT_EQ(vf.link_state, VfLinkState::kEnable);
  EXPECT_EQ(vf.max_tx_rate, 10000u);
  EXPECT_EQ(vf.mac.str(), "02:00:00:aa:00:01");
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_1"), "pod1");
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_0"), FakeKernel::kHost);
  ASSERT_EQ(pod->addresses.size(), 1u);
  EXPECT_EQ(pod->addresses[0].str(), "10.56.0.2/24");

  EXPECT_EQ(out["cniVersion"], "1.1.0");
  EXPECT_EQ(out["interfaces"][0]["name"], "net1");
  EXPECT_EQ(out["interfaces"][0]["pciID"], "0000:81:10.0");
  EXPECT_EQ(out["interfaces"][0]["mtu"], 9000);
  EXPECT_EQ(out["interfaces"][0]["sandbox"], kPod);
  EXPECT_EQ(out["ips"][0]["address"], "10.56.0.2/24");
  EXPECT_EQ(out["routes"][0]["dst"], "10.57.0.0/16");
}

TEST_F(SriovTest, AddRecordsThePodTheVfIsForWhereTheDaemonsPodMapReadsIt) {
  const Invocation out =
      invoke("ADD", sriovConf(), kPod, "c1", "net1",
             {{"CNI_ARGS",
               "IgnoreUnknown=1;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=trainer-3;K8S_POD_UID=6f1c"}});
  ASSERT_EQ(out.exit_code, 0) << out.stdout_data;
  auto st = StateStore(tmp_.path() / "state").load("c1", "net1");
  ASSERT_TRUE(st.ok() && st->has_value());
  const AttachmentState& a = **st;
  EXPECT_TRUE(a.complete);
  EXPECT_EQ(a.pod_namespace, "ml");
  EXPECT_EQ(a.pod_name, "trainer-3");
  EXPECT_EQ(a.pod_uid, "6f1c");
  EXPECT_EQ(a.priority, 3);  // the lossless priority
  EXPECT_EQ(a.netns, kPod);
  EXPECT_EQ(a.pci, "0000:81:10.0");
  EXPECT_EQ(a.pf_name, "ens1f0");
  EXPECT_EQ(a.rdma_moved, std::vector<std::string>{"mlx5_1"});
  // The interface's ifindex in the pod: a Soft-RoCE device on an upper of it names it.
  const auto pod_link = kernel_.link("pod1", "net1");
  ASSERT_TRUE(pod_link.has_value());
  EXPECT_GT(a.pod_ifindex, 0);
  EXPECT_EQ(a.pod_ifindex, pod_link->info.ifindex);
}

TEST_F(SriovTest, AddWritesTheDeviceInfoFileWithExtensionKeys) {
  addOk(sriovConf());
  std::ifstream in(tmp_.path() / "devinfo/c1.json");
  ASSERT_TRUE(in.good());
  const json d = json::parse(in);
  EXPECT_EQ(d["type"], "pci");
  EXPECT_EQ(d["version"], "1.1.0");
  EXPECT_EQ(d["pci"]["pci-address"], "0000:81:10.0");
  EXPECT_EQ(d["pci"]["pf-pci-address"], "0000:81:00.0");
  EXPECT_EQ(d["pci"]["rdma-device"], "mlx5_1");
  EXPECT_EQ(d["rdmanet"]["numa-node"], 1);
  EXPECT_EQ(d["rdmanet"]["vlan"], 100);
  EXPECT_EQ(d["rdmanet"]["pcp"], 3);
  EXPECT_EQ(d["rdmanet"]["roce-v2-gid-index"], 3);  // the GID of 10.56.0.2
}

TEST_F(SriovTest, DelRestoresEveryVfKnobAndTheNetdev) {
  const World before = world();
  const json out = addOk(sriovConf());
  const Invocation del = invoke("DEL", withPrev(sriovConf(), out));
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(world(), before) << dumpWorld(world()) << "\n--- want\n" << dumpWorld(before);
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "devinfo/c1.json"));
  EXPECT_EQ(ipam_.count("DEL"), 1);
}

TEST_F(SriovTest, DelRestoresThePfSettingsBeforeMovingTheNetdevBack) {
  addOk(sriovConf());
  const size_t mark = kernel_.callLog().size();
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  EXPECT_TRUE(vfKnobsBeforeMove(mark)) << fmt::format("{}", fmt::join(kernel_.callLog(), "\n"));
}

TEST_F(SriovTest, DoubleDelSucceeds) {
  const World before = world();
  addOk(sriovConf());
  EXPECT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  const Invocation again = invoke("DEL", sriovConf());
  EXPECT_EQ(again.exit_code, 0) << again.stdout_data;
  EXPECT_EQ(world(), before);
}

TEST_F(SriovTest, DelAfterTheNetnsIsGoneStillRestoresTheVf) {
  const World before = world();
  addOk(sriovConf());
  kernel_.deleteNetns("pod1");  // the VF falls back to the host under its pod name
  const Invocation del = invoke("DEL", sriovConf(), "");
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  World after = world();
  EXPECT_EQ(after.host_links, before.host_links) << dumpWorld(after);
  EXPECT_EQ(after.vfs, before.vfs);
  EXPECT_EQ(after.rdma, before.rdma);
  EXPECT_TRUE(after.state_files.empty());
  EXPECT_TRUE(after.leases.empty());
}

TEST_F(SriovTest, ARefusedKnobFailsCleanlyAndRollsEverythingBack) {
  kernel_.unsupportVfKnob(FakeKernel::kHost, "ens1f0", VfKnob::kLinkState);
  const World before = world();
  const Invocation out = invoke("ADD", sriovConf());
  ASSERT_NE(out.exit_code, 0);
  const json err = json::parse(out.stdout_data);
  EXPECT_EQ(err["code"], 101);
  const std::string msg = err["msg"];
  EXPECT_NE(msg.find("link_state"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Operation not supported"), std::string::npos) << msg;
  EXPECT_NE(err["details"].get<std::string>().find("ens1f0"), std::string::npos);
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

TEST_F(SriovTest, IpamFailureRollsBackAndPassesTheDelegateCode) {
  ipam_.fail = json{{"code", 11}, {"msg", "no free addresses"}};
  const World before = world();
  const Invocation out = invoke("ADD", sriovConf());
  ASSERT_NE(out.exit_code, 0);
  const json err = json::parse(out.stdout_data);
  EXPECT_EQ(err["code"], 11);
  EXPECT_NE(err["msg"].get<std::string>().find("no free addresses"), std::string::npos);
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

TEST_F(SriovTest, ModeIsInferredFromAVfDeviceId) {
  const json out = addOk(R"({"cniVersion": "0.3.1", "name": "n", "type": "rdmanet",
    "deviceID": "0000:81:10.2"})");
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
  EXPECT_EQ(out["cniVersion"], "0.3.1");
  EXPECT_FALSE(out["interfaces"][0].contains("pciID"));  // 1.1 only
}

TEST_F(SriovTest, RdmaFalseLeavesTheRdmaDeviceInTheHost) {
  addOk(sriovConf(R"(, "rdma": false)"));
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_1"), FakeKernel::kHost);
}

TEST_F(SriovTest, SharedRdmaModeMovesNothing) {
  kernel_.setRdmaNetnsMode(RdmaNetnsMode::kShared);
  addOk(sriovConf());
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_1"), FakeKernel::kHost);
}

TEST_F(SriovTest, AKernelWithoutRdmaNetlinkStillAttaches) {
  kernel_.setRdmaSupported(false);
  addOk(sriovConf());
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
}

TEST_F(SriovTest, ABusyDeviceIsTryAgainLater) {
  ASSERT_TRUE(deps_->store.ensure().ok());
  auto held = DeviceLock::acquire(deps_->store.lockPath(lockName("dev", "0000:81:10.0")),
                                  std::chrono::milliseconds(10), deps_->clock);
  ASSERT_TRUE(held.ok());
  const World before = world();
  const auto t0 = std::chrono::steady_clock::now();
  const Invocation out = invoke("ADD", sriovConf());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  ASSERT_NE(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data)["code"], 11);
  EXPECT_EQ(world(), before);
}

TEST_F(SriovTest, APfDeviceIdIsHostDeviceNotSriov) {
  const Invocation out = invoke("ADD", R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet",
    "mode": "sriov", "deviceID": "0000:81:00.0"})");
  ASSERT_NE(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data)["code"], 7);
}

TEST_F(SriovTest, AMissingDeviceIs100) {
  const Invocation out = invoke("ADD", R"({"cniVersion": "1.0.0", "name": "n", "type": "rdmanet",
    "deviceID": "0000:99:00.0"})");
  ASSERT_NE(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data)["code"], 100);
}

TEST_F(SriovTest, CheckPassesAfterAddAndCatchesVfDrift) {
  const json out = addOk(sriovConf());
  const Invocation ok = invoke("CHECK", withPrev(sriovConf(), out));
  EXPECT_EQ(ok.exit_code, 0) << ok.stdout_data;
  ASSERT_TRUE(host_.setVfVlan(pf_ifindex_, 0, 200, 3, 0x8100).ok());
  const Invocation bad = invoke("CHECK", withPrev(sriovConf(), out));
  ASSERT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.stdout_data.find("vlan 200"), std::string::npos) << bad.stdout_data;
}

// Fault injection: fail the nth state-changing kernel call of a successful ADD, for every n,
// and prove that nothing is left behind.
TEST(SriovRollbackTest, AddRollsBackAfterAFailureAtEveryStep) {
  int mutations = 0;
  {
    TestNode n;
    n.kernel_.clearFaults();
    const int start = n.kernel_.mutations();
    n.addOk(n.sriovConf());
    mutations = n.kernel_.mutations() - start;
  }
  ASSERT_GT(mutations, 8);
  for (int i = 1; i <= mutations; ++i) {
    TestNode n;
    const TestNode::World before = n.world();
    n.kernel_.failMutation(i, EIO);
    const Invocation out = n.invoke("ADD", n.sriovConf());
    EXPECT_NE(out.exit_code, 0) << "mutation " << i;
    n.kernel_.clearFaults();
    EXPECT_EQ(n.world(), before) << "after failing mutation " << i << ":\n"
                                 << dumpWorld(n.world()) << "\n--- want\n"
                                 << dumpWorld(before);
  }
}

TEST_F(SriovTest, EnforceRefusesAPodMtuAboveThePfMtuNamingBoth) {
  ASSERT_TRUE(host_.setMtu(pf_ifindex_, 4200).ok());
  const World before = world();
  const Invocation out = invoke("ADD", sriovConf());  // pod MTU 9000
  ASSERT_NE(out.exit_code, 0);
  const json err = json::parse(out.stdout_data);
  EXPECT_EQ(err["code"], 7);
  const std::string msg = err["msg"];
  EXPECT_NE(msg.find("pod MTU 9000 is above the MTU 4200 of PF ens1f0"), std::string::npos) << msg;
  EXPECT_EQ(world(), before);  // refused before the first change
}

TEST_F(SriovTest, WarnLetsAPodMtuAboveThePfMtuThroughAndLogs) {
  ASSERT_TRUE(host_.setMtu(pf_ifindex_, 4200).ok());
  addOk(sriovConf().replace(sriovConf().find(R"("check": "enforce")"), 18, R"("check": "warn")"));
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
}

TEST_F(SriovTest, PodMtuEqualToThePfMtuIsFine) {
  addOk(sriovConf());  // 9000 on a 9000 PF
  EXPECT_EQ(kernel_.link("pod1", "net1")->info.mtu, 9000u);
}

// A VF as a partition of its PF (issue 32): the share of the port the pod's DRA claim holds
// ("maxTxRateMbps" of its record) caps the VF's max_tx_rate, through the knob DEL restores.
class SriovShareTest : public PluginTest {
 protected:
  static constexpr const char* kPodUid = "9d3f0c2e-5b1a-4c7e-8f00-0a1b2c3d4e5f";
  static constexpr const char* kNadMax = R"("max_tx_rate": 10000, )";

  // sriovConf with the DRA keys; `nad_rates` replaces its max_tx_rate ("" for none).
  std::string shareConf(const std::string& nad_rates = kNadMax) const {
    std::string c = sriovConf(fmt::format(R"(, "draDevicesDir": "{}", "resourceName": "rdma/vf")",
                                          draRecords().string()));
    return c.replace(c.find(kNadMax), std::string_view(kNadMax).size(), nad_rates);
  }
  // The pod's claim holds VF0 with this "maxTxRateMbps".
  void claimVf0(const json& share) const {
    writeDraRecord(kPodUid, "a-claim",
                   json::array({draDevice("rdma/vf", "0000:81:10.0", {{"maxTxRateMbps", share}})}));
  }
  Invocation run(const std::string& command, const std::string& conf) {
    return invoke(command, conf, kPod, "c1", "net1",
                  {{"CNI_ARGS", fmt::format("IgnoreUnknown=1;K8S_POD_UID={}", kPodUid)}});
  }
  json addOk(const std::string& conf) {
    const Invocation add = run("ADD", conf);
    EXPECT_EQ(add.exit_code, 0) << add.stdout_data;
    return add.exit_code == 0 ? json::parse(add.stdout_data) : json();
  }
  VfInfo vf(int i = 0) const { return kernel_.link(FakeKernel::kHost, "ens1f0")->vfs[i]; }
};

TEST_F(SriovShareTest, AddCapsTheVfAtItsClaimsShareAndDelRestoresItsOriginalRate) {
  ASSERT_TRUE(host_.setVfRate(pf_ifindex_, 0, 0, 40000).ok());  // someone's rate before ours
  const World before = world();
  claimVf0(2500);
  const json out = addOk(shareConf(""));
  EXPECT_EQ(vf().max_tx_rate, 2500u);
  EXPECT_EQ(vf().min_tx_rate, 0u);
  auto st = StateStore(tmp_.path() / "state").load("c1", "net1");
  ASSERT_TRUE(st.ok() && st->has_value());
  EXPECT_NE(std::find((**st).vf_knobs_set.begin(), (**st).vf_knobs_set.end(), "rate"),
            (**st).vf_knobs_set.end());
  const Invocation check = run("CHECK", withPrev(shareConf(""), out));
  EXPECT_EQ(check.exit_code, 0) << check.stdout_data;
  const Invocation del = run("DEL", withPrev(shareConf(""), out));
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(vf().max_tx_rate, 40000u);
  EXPECT_EQ(world(), before) << dumpWorld(world()) << "\n--- want\n" << dumpWorld(before);
}

TEST_F(SriovShareTest, ANadMaxTxRateBelowTheShareIsKept) {
  claimVf0(25000);
  const json out = addOk(shareConf());
  EXPECT_EQ(vf().max_tx_rate, 10000u);
  EXPECT_EQ(run("CHECK", withPrev(shareConf(), out)).exit_code, 0);
}

TEST_F(SriovShareTest, AShareBelowTheNadMaxTxRateWinsAndCheckComparesWithIt) {
  claimVf0(2500);
  const json out = addOk(shareConf());
  EXPECT_EQ(vf().max_tx_rate, 2500u);
  const Invocation ok = run("CHECK", withPrev(shareConf(), out));
  EXPECT_EQ(ok.exit_code, 0) << ok.stdout_data;
  ASSERT_TRUE(host_.setVfRate(pf_ifindex_, 0, 0, 10000).ok());  // the NAD's, not the share
  const Invocation bad = run("CHECK", withPrev(shareConf(), out));
  ASSERT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.stdout_data.find("max_tx_rate 10000 (want 2500)"), std::string::npos)
      << bad.stdout_data;
}

TEST_F(SriovShareTest, AMinTxRateAboveTheShareIsRefusedWithNothingChanged) {
  claimVf0(2500);
  const World before = world();
  const Invocation add = run("ADD", shareConf(R"("min_tx_rate": 5000, "max_tx_rate": 10000, )"));
  ASSERT_NE(add.exit_code, 0);
  const json err = json::parse(add.stdout_data);
  EXPECT_EQ(err["code"], 7);
  EXPECT_NE(err["msg"].get<std::string>().find("above the 2500 Mbit/s"), std::string::npos) << err;
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

TEST_F(SriovShareTest, AFailedAddRestoresTheRateItSet) {
  claimVf0(2500);
  const World before = world();
  ipam_.fail = json{{"cniVersion", "1.0.0"}, {"code", 11}, {"msg", "pool exhausted"}};
  EXPECT_NE(run("ADD", shareConf("")).exit_code, 0);
  EXPECT_EQ(world(), before) << dumpWorld(world());
}

TEST_F(SriovShareTest, AMalformedShareIsLoggedAndTheNadsRateStands) {
  claimVf0("25G");
  addOk(shareConf());
  EXPECT_EQ(vf().max_tx_rate, 10000u);
  const std::string log = logText();
  EXPECT_NE(log.find("no DRA claim share of 0000:81:10.0's port is enforced"), std::string::npos)
      << log;
  EXPECT_NE(log.find("maxTxRateMbps"), std::string::npos) << log;
}

TEST_F(SriovShareTest, HostDeviceModeOnAClaimedVfAttachesAndSaysTheShareIsNotEnforced) {
  writeDraRecord(kPodUid, "a-claim",
                 json::array({draDevice("rdma/vf", "0000:81:10.2", {{"maxTxRateMbps", 2500}})}));
  const std::vector<VfInfo> vfs = world().vfs;
  addOk(fmt::format(R"({{"cniVersion": "1.1.0", "name": "hd", "type": "rdmanet",
      "mode": "host-device", "deviceID": "0000:81:10.2", "draDevicesDir": "{}",
      "resourceName": "rdma/vf", "ipam": {{"type": "fake-ipam"}}}})",
                    draRecords().string()));
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
  EXPECT_EQ(world().vfs, vfs);  // no VF knob touched
  const std::string log = logText();
  EXPECT_NE(log.find("holds 2500 Mbit/s of 0000:81:10.2's port, which is NOT enforced: "
                     "host-device mode cannot cap"),
            std::string::npos)
      << log;
}

// macvlan mode shapes its egress to the share instead: plugin_macvlan_test.cc, MacvlanShareTest.

}  // namespace
}  // namespace rdmanet::cni::testing
