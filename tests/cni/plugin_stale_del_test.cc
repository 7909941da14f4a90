// Issue 29 over the fake kernel: DEL acts only on a device it proves is the attachment's
// (cni/modes/device_identity.h), leaves a device that is no longer the record's to its owner
// (cni/state/ownership.h), and finishes over a torn state file. The real-kernel counterparts
// are in netns_stale_del_test.cc.
#include <filesystem>

#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;

class StaleDelTest : public PluginTest {
 protected:
  // The sriov netconf with its own device-info file, VLAN and pod info directory.
  std::string sriov(const std::string& cid, int vlan) const {
    json c = json::parse(sriovConf());
    c["runtimeConfig"]["CNIDeviceInfoFile"] = (tmp_.path() / "devinfo" / (cid + ".json")).string();
    c["vlan"] = vlan;
    c["podInfoDir"] = podInfoRoot();
    return c.dump();
  }
  std::string podInfoRoot() const { return (tmp_.path() / "pod-info").string(); }
  fs::path podInfo() const { return fs::path(podInfoRoot()) / "0000:81:10.0" / "rdmanet.json"; }
  VfInfo vf0() const { return kernel_.link(FakeKernel::kHost, "ens1f0")->vfs[0]; }
  // The pod's netns went; the VF came back to the host (as the kernel returns it, under its pod
  // name) and someone named it as udev would.
  void podGoneVfBack(const std::string& pod) {
    kernel_.deleteNetns(pod);
    auto vf = kernel_.link(FakeKernel::kHost, "net1");
    ASSERT_TRUE(vf.has_value()) << dumpWorld(world());
    ASSERT_TRUE(host_.rename(vf->info.ifindex, "ens1f0v0").ok());
  }
  fs::path stateFile(const std::string& cid) const {
    return tmp_.path() / "state" / (cid + "_net1.json");
  }
};

// Hole 3, same boot: c1's pod went without a DEL, c2 got the VF; c1's late DEL must not put
// c2's VF back on c1's original VLAN, nor take c2's pod info.
TEST_F(StaleDelTest, ALateDelLeavesTheVfAndPodInfoOfItsNewOwner) {
  addOk(sriov("c1", 100), kPod, "c1");
  podGoneVfBack("pod1");
  addOk(sriov("c2", 200), kPod2, "c2");
  ASSERT_EQ(vf0().vlan, 200);
  ASSERT_TRUE(fs::exists(podInfo()));

  const Invocation del = invoke("DEL", sriov("c1", 100), "", "c1");
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(vf0().vlan, 200) << dumpWorld(world());
  EXPECT_EQ(vf0().qos, 3);
  EXPECT_TRUE(fs::exists(podInfo()));
  EXPECT_TRUE(kernel_.link("pod2", "net1").has_value());
  EXPECT_FALSE(fs::exists(stateFile("c1")));
  EXPECT_EQ(ipam_.live.count("c1_net1"), 0u);  // its lease is released all the same

  // The newer record is not held back by the older one: c2's DEL restores what c2 found (c1's
  // settings, which c1's DEL never undid), removes its pod info and brings the VF back.
  ASSERT_EQ(invoke("DEL", sriov("c2", 200), kPod2, "c2").exit_code, 0);
  EXPECT_EQ(vf0().vlan, 100) << dumpWorld(world());
  EXPECT_FALSE(fs::exists(podInfo()));
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0v0").has_value());
}

// Hole 3 after a reboot: the VF came back fresh and was configured since (by another CNI, an
// operator); the DEL from the earlier boot restores none of its knobs.
TEST_F(StaleDelTest, ADelFromAnEarlierBootRestoresNoKnobs) {
  addOk(sriov("c1", 100), kPod, "c1");
  podGoneVfBack("pod1");
  setBootId("0b00713d-0000-4000-8000-000000000002");
  ASSERT_TRUE(host_.setVfVlan(pf_ifindex_, 0, 7, 0, 0x8100).ok());
  ASSERT_TRUE(host_.setVfTrust(pf_ifindex_, 0, false).ok());
  const VfInfo now = vf0();
  const auto host_links = world().host_links;

  const Invocation del = invoke("DEL", sriov("c1", 100), "", "c1");
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_EQ(vf0(), now) << dumpWorld(world());
  EXPECT_EQ(world().host_links, host_links);
  EXPECT_FALSE(fs::exists(stateFile("c1")));
  EXPECT_TRUE(ipam_.live.empty());
}

// The same boot with the netns gone and nobody else on the VF: DEL still restores it (the
// checks above hold back only a stale record).
TEST_F(StaleDelTest, ADelInTheSameBootStillRestoresTheVf) {
  addOk(sriov("c1", 100), kPod, "c1");
  kernel_.deleteNetns("pod1");
  ASSERT_EQ(invoke("DEL", sriov("c1", 100), "", "c1").exit_code, 0);
  EXPECT_EQ(vf0().vlan, 0) << dumpWorld(world());
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0v0").has_value()) << dumpWorld(world());
}

// Hole 1 with a physical device: the netns went, the host already had a link of the pod-side
// name, so the NIC came back as "dev<N>". DEL renames the NIC (proven by its PCI function) and
// leaves the other link alone.
TEST_F(StaleDelTest, ALinkNamedLikeThePodInterfaceIsNeverTakenForTheDevice) {
  addOk(hostDeviceConf(R"(, "mtu": 9000)"));
  FakeLinkSpec spec;
  spec.name = "net1";
  spec.kind = "veth";
  spec.mtu = 1400;
  kernel_.addLink(FakeKernel::kHost, spec);
  const auto before = kernel_.link(FakeKernel::kHost, "net1");
  kernel_.deleteNetns("pod1");

  const Invocation del = invoke("DEL", hostDeviceConf(R"(, "mtu": 9000)"), "");
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  auto other = kernel_.link(FakeKernel::kHost, "net1");
  ASSERT_TRUE(other.has_value()) << dumpWorld(world());
  EXPECT_EQ(other->info.mtu, 1400u);
  EXPECT_EQ(other->info.mac, before->info.mac);
  auto nic = kernel_.link(FakeKernel::kHost, "ens2f0");
  ASSERT_TRUE(nic.has_value()) << dumpWorld(world());
  EXPECT_EQ(nic->info.parent_dev, "0000:82:00.0");
  EXPECT_EQ(nic->info.mtu, 1500u);
}

// In the pod, too, the device is the proven one: a pod that renamed its interface and made
// another link of that name gets its VF taken back, and the other link left in place.
TEST_F(StaleDelTest, InThePodTheDeviceIsFoundByWhatItIsNotByName) {
  addOk(sriovConf());
  FakeNetlink pod(kernel_, "pod1");
  const int vf = pod.linkByName("net1")->ifindex;
  ASSERT_TRUE(pod.setUp(vf, false).ok());
  ASSERT_TRUE(pod.rename(vf, "mine").ok());
  kernel_.addLink("pod1", "net1", "veth");
  ASSERT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
  auto back = kernel_.link(FakeKernel::kHost, "ens1f0v0");
  ASSERT_TRUE(back.has_value()) << dumpWorld(world());
  EXPECT_EQ(back->info.parent_dev, "0000:81:10.0");
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
}

// Hole 2: an empty state file (the first save lost to a power loss) is no state: DEL recovers
// the VF still in the pod, releases IPAM, removes the file and succeeds.
TEST_F(StaleDelTest, AnEmptyStateFileIsNoStateAndDelFinishes) {
  addOk(sriovConf());
  fs::resize_file(stateFile("c1"), 0);
  const Invocation del = invoke("DEL", sriovConf());
  ASSERT_EQ(del.exit_code, 0) << del.stdout_data;
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens1f0v0").has_value()) << dumpWorld(world());
  EXPECT_FALSE(fs::exists(stateFile("c1")));
  EXPECT_TRUE(ipam_.live.empty());
  EXPECT_EQ(invoke("DEL", sriovConf()).exit_code, 0);
}

// What DEL proves with, as ADD records it.
TEST_F(StaleDelTest, TheStateFileRecordsTheBootAndTheDevicesIdentity) {
  addOk(sriovConf());
  auto st = deps_->store.load("c1", "net1");
  ASSERT_TRUE(st.ok() && st->has_value());
  EXPECT_EQ((*st)->boot_id, "0b00713d-0000-4000-8000-000000000001");
  EXPECT_TRUE((*st)->has_identity);
  EXPECT_EQ((*st)->dev_parent, "0000:81:10.0");
  EXPECT_EQ((*st)->dev_pod_ifindex, kernel_.link("pod1", "net1")->info.ifindex);
  EXPECT_FALSE((*st)->dev_perm_mac.isZero());
}

}  // namespace
}  // namespace rdmanet::cni::testing
