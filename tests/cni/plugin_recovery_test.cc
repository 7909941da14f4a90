// DEL without a state file while the pod still holds the device (cni/modes/state_recovery.h), and
// CHECK of the RDMA device's namespace, over the fake kernel.
#include <fmt/format.h>

#include <filesystem>

#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

class RecoveryTest : public PluginTest {
 protected:
  // ADD, then lose the state file (as a wiped /var/lib/cni would).
  json addAndLoseState(const std::string& conf, const std::string& netns = kPod,
                       const std::string& cid = "c1") {
    const json out = addOk(conf, netns, cid);
    EXPECT_TRUE(deps_->store.remove(cid, "net1").ok());
    EXPECT_FALSE(deps_->store.load(cid, "net1").value().has_value());
    return out;
  }
  static VfInfo defaults(int index) {
    VfInfo v;
    v.index = index;
    v.spoofchk = true;
    return v;
  }
  static int code(const Invocation& inv) { return json::parse(inv.stdout_data).value("code", 0); }
};

TEST_F(RecoveryTest, SriovVfComesBackWithItsKnobsResetAndItsRdmaDevice) {
  addAndLoseState(sriovConf());
  ASSERT_NE(kernel_.link(FakeKernel::kHost, "ens1f0")->vfs[0], defaults(0));
  const Invocation del = invoke("DEL", sriovConf());
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value()) << dumpWorld(world());
  auto vf = kernel_.link(FakeKernel::kHost, "ens1f0v0");  // the name sysfs still gives it
  ASSERT_TRUE(vf.has_value()) << dumpWorld(world());
  EXPECT_FALSE(vf->info.admin_up);
  const auto vfs = kernel_.link(FakeKernel::kHost, "ens1f0")->vfs;
  EXPECT_EQ(vfs[0], defaults(0)) << dumpWorld(world());
  EXPECT_EQ(vfs[1], defaults(1));  // the other VF untouched
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_1"), FakeKernel::kHost);
  EXPECT_TRUE(world().leases.empty());
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "devinfo/c1.json"));
  EXPECT_TRUE(world().state_files.empty());
}

TEST_F(RecoveryTest, VfKnobsAreResetThroughThePfBeforeTheNetdevMoves) {
  addAndLoseState(sriovConf());
  const size_t mark = kernel_.callLog().size();
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  EXPECT_TRUE(vfKnobsBeforeMove(mark)) << fmt::format("{}", fmt::join(kernel_.callLog(), "\n"));
}

TEST_F(RecoveryTest, ATakenNameFallsBackToThePfVfNameThenThePciPath) {
  addAndLoseState(sriovConf());
  kernel_.addLink(FakeKernel::kHost, "ens1f0v0", "veth");  // something took the VF's old name
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  // "ens1f0v0" is both the sysfs name and <pf>v<N>; next comes systemd's path name (decimal).
  auto vf = kernel_.link(FakeKernel::kHost, "enp129s16f0");
  ASSERT_TRUE(vf.has_value()) << dumpWorld(world());
  EXPECT_EQ(vf->info.parent_dev, "0000:81:10.0");
}

TEST_F(RecoveryTest, ALinkThatIsNotTheVfIsLeftAlone) {
  // ADD never ran; the pod's net1 is some other device (no parent device).
  kernel_.addLink("pod1", "net1", "veth");
  const World before = world();
  const Invocation del = invoke("DEL", sriovConf());
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(world(), before) << dumpWorld(world());
  EXPECT_GT(ipam_.count("DEL"), 0);  // IPAM is still released
}

TEST_F(RecoveryTest, AnotherVfInThePodUnderOurNameIsLeftAlone) {
  addOk(R"({"cniVersion": "1.1.0", "name": "n", "type": "rdmanet", "deviceID": "0000:81:10.2"})");
  ASSERT_TRUE(deps_->store.remove("c1", "net1").ok());
  const World before = world();
  // The DEL names VF0, but net1 in the pod is VF1.
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  EXPECT_EQ(world().pod_links, before.pod_links) << dumpWorld(world());
  EXPECT_EQ(world().vfs, before.vfs);
}

TEST_F(RecoveryTest, DoubleDelAfterRecoveryIsANoOp) {
  addAndLoseState(sriovConf());
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  // An admin sets the VF up again; a second DEL must not touch it.
  ASSERT_TRUE(host_.setVfVlan(pf_ifindex_, 0, 7, 0, 0x8100).ok());
  const World after_first = world();
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  EXPECT_EQ(world(), after_first) << dumpWorld(world());
}

TEST_F(RecoveryTest, WithTheNetnsGoneTooTheVfIsNotTouched) {
  addAndLoseState(sriovConf());
  kernel_.deleteNetns("pod1");  // the VF returns to the host with the pod's settings
  const World before = world();
  const Invocation del = invoke("DEL", sriovConf(), "");
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(world().vfs, before.vfs);
  EXPECT_EQ(world().host_links, before.host_links);
}

TEST_F(RecoveryTest, AKernelErrorFailsDelAndARetryFinishesTheJob) {
  addAndLoseState(sriovConf());
  kernel_.failCall(FakeOp::kMoveToNetns, EBUSY);
  const Invocation del = invoke("DEL", sriovConf());
  ASSERT_NE(del.exit_code, 0);
  EXPECT_EQ(code(del), 101) << del.stdout_data;
  kernel_.clearFaults();
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0v0").has_value()) << dumpWorld(world());
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());
}

TEST_F(RecoveryTest, SharedRdmaModeMovesNoRdmaDeviceBack) {
  kernel_.setRdmaNetnsMode(RdmaNetnsMode::kShared);
  addAndLoseState(sriovConf());
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  EXPECT_EQ(kernel_.rdmaNetnsOf("mlx5_1"), FakeKernel::kHost);
  EXPECT_EQ(kernel_.calls(FakeOp::kMoveRdmaToNetns), 0);
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0v0").has_value());
}

TEST_F(RecoveryTest, HostDeviceComesBackUnderItsConfiguredName) {
  addAndLoseState(hostDeviceConf(R"(, "mtu": 9000)"));
  ASSERT_EQ(invoke("DEL", hostDeviceConf(R"(, "mtu": 9000)")).exit_code, 0);
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens2f0").has_value()) << dumpWorld(world());
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());
}

TEST_F(RecoveryTest, HostDeviceWithVlanLosesTheVlanAndComesBack) {
  const std::string conf =
      R"({"cniVersion": "1.1.0", "name": "hd", "type": "rdmanet", "pciBusID": "0000:82:00.0",
          "vlan": 200, "lossless": {"priority": 5, "check": "off"}})";
  addAndLoseState(conf);
  ASSERT_EQ(invoke("DEL", conf).exit_code, 0);
  EXPECT_TRUE(world().pod_links.size() == 1) << dumpWorld(world());  // lo only
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens2f0").has_value()) << dumpWorld(world());
}

TEST_F(RecoveryTest, MacvlanReleasesItsShareOfTheHostVlanDevice) {
  const std::string conf = macvlanConf(R"(, "vlan": 100, "lossless": {"priority": 3})");
  addOk(conf, kPod2, "c2");
  addAndLoseState(conf, kPod, "c1");
  ASSERT_EQ(invoke("DEL", conf, kPod, "c1").exit_code, 0);
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value());  // c2 still uses it
  ASSERT_EQ(invoke("DEL", conf, kPod2, "c2").exit_code, 0);
  EXPECT_FALSE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value()) << dumpWorld(world());
}

TEST_F(RecoveryTest, MacvlanStateLostAndNetnsGoneStillFreesTheHostVlanDevice) {
  const std::string conf = macvlanConf(R"(, "vlan": 100, "lossless": {"priority": 3})");
  addAndLoseState(conf);
  kernel_.deleteNetns("pod1");
  ASSERT_EQ(invoke("DEL", conf, "").exit_code, 0);
  EXPECT_FALSE(kernel_.link(FakeKernel::kHost, "ens1f0.100").has_value()) << dumpWorld(world());
}

// CHECK and the RDMA device's namespace.
TEST_F(RecoveryTest, CheckFailsWhenTheRdmaDeviceLeftThePod) {
  const json out = addOk(sriovConf());
  ASSERT_EQ(invoke("CHECK", withPrev(sriovConf(), out)).exit_code, 0);
  auto host = kernel_.netnsHandle(FakeKernel::kHost);
  FakeNetlink pod(kernel_, "pod1");
  ASSERT_TRUE(pod.moveRdmaToNetns("mlx5_1", host.fd()).ok());
  const Invocation bad = invoke("CHECK", withPrev(sriovConf(), out));
  ASSERT_NE(bad.exit_code, 0);
  EXPECT_EQ(code(bad), 100);
  EXPECT_NE(bad.stdout_data.find("mlx5_1 is not in the pod"), std::string::npos) << bad.stdout_data;
}

TEST_F(RecoveryTest, CheckFailsWhenTheRdmaPortIsBoundToAnotherNetdev) {
  const json out = addOk(sriovConf());
  kernel_.addLink("pod1", "other");
  kernel_.addRdmaDevice("mlx5_1", "pod1", "other");  // the kernel now names "other" as its netdev
  const Invocation bad = invoke("CHECK", withPrev(sriovConf(), out));
  ASSERT_NE(bad.exit_code, 0);
  EXPECT_EQ(code(bad), 7);
  EXPECT_NE(bad.stdout_data.find("bound to other"), std::string::npos) << bad.stdout_data;
}

TEST_F(RecoveryTest, CheckWithoutMovedRdmaDevicesDoesNotAskRdmaNetlink) {
  kernel_.setRdmaNetnsMode(RdmaNetnsMode::kShared);
  const json out = addOk(sriovConf());
  kernel_.setRdmaSupported(false);
  EXPECT_EQ(invoke("CHECK", withPrev(sriovConf(), out)).exit_code, 0);
  EXPECT_EQ(kernel_.calls(FakeOp::kRdmaLinks), 0);
}

}  // namespace
}  // namespace rdmanet::cni::testing
