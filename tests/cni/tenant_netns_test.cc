// Tenant isolation with the real binary on the real kernel (label netns; issue 29): a pod gets
// only the device kubelet gave it, a MAC only where the network allows it; a network's files stay
// beneath the node's roots, never through a symlink, never blocking on a FIFO; an IPAM delegate
// that hangs is killed and the device lock released. The "node" is a simulated sysfs whose PCI
// functions own this test's veths, and throw-away namespaces.
#include <fmt/format.h>
#include <sys/stat.h>

#include "tests/cni/netns_fixture.h"
#include "tests/simnode/sim_tree.h"

namespace rdmanet::cni::testing {
namespace {

constexpr const char* kOwnerUid = "5e0b2f6a-1c7d-4b8e-9f10-2a3b4c5d6e7f";
constexpr const char* kThiefUid = "d41f7a09-3e2c-4f6b-8a5d-6c7e8f901a2b";
constexpr const char* kVf = "0000:83:00.5";
constexpr const char* kMgmt = "0000:84:00.0";

class TenantNetnsTest : public NetnsTest {
 protected:
  void SetUp() override {
    NetnsTest::SetUp();
    if (IsSkipped()) return;
    dev_ = tag_ + "d";
    mgmt_ = tag_ + "g";
    vethPair(dev_, tag_ + "dp");
    vethPair(mgmt_, tag_ + "gp");
    // The node: two PCI functions whose netdevs are the veths (sysfs is all the CNI reads to
    // find a function's netdev).
    tree_ = std::make_unique<sim::SimTree>(tmp_.path() / "node");
    const std::string rc = tree_->addHostBridge(0, 0x80);
    tree_->addFunction(rc, {.address = PciAddress::parse(kVf).value(), .driver = "ixgbevf"});
    tree_->addFunction(rc, {.address = PciAddress::parse(kMgmt).value(), .driver = "igb"});
    tree_->addNetdev(PciAddress::parse(kVf).value(), {.name = dev_, .ifindex = 0});
    tree_->addNetdev(PciAddress::parse(kMgmt).value(), {.name = mgmt_, .ifindex = 0});
    // Kubelet gave the VF to the owner's pod.
    std::ofstream(checkpoint()) << json{
        {"Data",
         {{"PodDeviceEntries", json::array({{{"PodUID", kOwnerUid},
                                             {"ContainerName", "train"},
                                             {"ResourceName", "rdma/vf"},
                                             {"DeviceIDs", {{"0", {kVf}}}},
                                             {"AllocResp", ""}}})},
          {"RegisteredDevices", {{"rdma/vf", {kVf}}}}}},
        {"Checksum", 1}}.dump();
  }

  BinaryRun run(const std::string& cmd, const std::string& conf, const std::string& pod,
                const std::string& cid, const std::string& args, const std::string& cni_path = "") {
    std::map<std::string, std::string> env = {{"CNI_CONTAINERID", cid},
                                              {"CNI_NETNS", pod.empty() ? "" : nsPath(pod)},
                                              {"CNI_IFNAME", "net1"},
                                              {"CNI_ARGS", args},
                                              {"RDMANET_SYSFS_ROOT", tree_->root().string()}};
    if (!cni_path.empty()) env["CNI_PATH"] = cni_path;
    return runRdmanet(cmd, conf, env, state_dir());
  }
  static std::string podArgs(const std::string& uid, const std::string& name) {
    return fmt::format("IgnoreUnknown=1;K8S_POD_NAMESPACE=team;K8S_POD_NAME={};K8S_POD_UID={}",
                       name, uid);
  }
  // A network with a pool but no device of its own; the pod's annotation names one, which
  // Multus passes as runtimeConfig.deviceID (the deviceID capability declared).
  std::string annotatedConf(const std::string& pci, const std::string& ip,
                            const std::string& extra = "") const {
    return fmt::format(R"({{"cniVersion": "1.1.0", "name": "rdma-vf", "type": "rdmanet",
      "mode": "host-device", "capabilities": {{"deviceID": true}},
      "ipam": {{"type": "static", "addresses": [{{"address": "{}"}}]}},
      "runtimeConfig": {{"deviceID": "{}"}}{}}})",
                       ip, pci, extra);
  }
  bool inPod(const std::string& pod) const {
    return sh("ip netns exec " + nsName(pod) + " ip link show net1") == 0;
  }
  bool inHost(const std::string& link) const { return sh("ip link show " + link) == 0; }

  std::unique_ptr<sim::SimTree> tree_;
  std::string dev_, mgmt_;
};

TEST_F(TenantNetnsTest, APodNamingAnotherPodsVfGetsAClearErrorAndTheOwnerStillGetsIt) {
  const BinaryRun thief =
      run("ADD", annotatedConf(kVf, "10.81.0.2/24"), "b", "thief", podArgs(kThiefUid, "thief"));
  ASSERT_NE(thief.exit_code, 0) << "the thief's pod got " << kVf << ": " << thief.out;
  EXPECT_EQ(thief.doc["code"], 7) << thief.out;
  const std::string msg = thief.doc.value("msg", "");
  EXPECT_NE(msg.find(kVf), std::string::npos) << msg;
  EXPECT_NE(msg.find("team/thief"), std::string::npos) << msg;
  EXPECT_FALSE(inPod("b"));
  EXPECT_TRUE(inHost(dev_));
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());

  const std::string conf = annotatedConf(kVf, "10.81.0.1/24");
  const BinaryRun owner = run("ADD", conf, "a", "owner", podArgs(kOwnerUid, "owner"));
  ASSERT_EQ(owner.exit_code, 0) << owner.out;
  EXPECT_TRUE(inPod("a"));
  EXPECT_FALSE(inHost(dev_));
  EXPECT_EQ(run("DEL", conf, "a", "owner", podArgs(kOwnerUid, "owner")).exit_code, 0);
  EXPECT_TRUE(inHost(dev_));
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
}

TEST_F(TenantNetnsTest, APciBusIdNetworkNeverYieldsTheManagementNic) {
  const std::string conf =
      annotatedConf(kMgmt, "10.81.0.3/24", fmt::format(R"(, "pciBusID": "{}")", kVf));
  const BinaryRun r = run("ADD", conf, "b", "thief", podArgs(kThiefUid, "thief"));
  ASSERT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(kMgmt), std::string::npos) << r.out;
  EXPECT_TRUE(inHost(mgmt_));
  EXPECT_TRUE(inHost(dev_));
  EXPECT_FALSE(inPod("b"));
}

TEST_F(TenantNetnsTest, APodChosenMacNeedsTheNetworksAllowPodMac) {
  const std::string conf = fmt::format(R"({{"cniVersion": "1.1.0", "name": "hd", "type": "rdmanet",
    "device": "{}", "ipam": {{"type": "static", "addresses": [{{"address": "10.81.0.4/24"}}]}}}})",
                                       dev_);
  const std::string args = podArgs(kThiefUid, "p") + ";MAC=02:00:00:00:77:77";
  const BinaryRun refused = run("ADD", conf, "a", "p", args);
  ASSERT_NE(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.out.find("allowPodMac"), std::string::npos) << refused.out;
  EXPECT_TRUE(inHost(dev_));
  json allowed = json::parse(conf);
  allowed["allowPodMac"] = true;
  const BinaryRun ok = run("ADD", allowed.dump(), "a", "p", args);
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(
      shOut("ip netns exec " + nsName("a") + " ip -o link show net1").find("02:00:00:00:77:77"),
      std::string::npos);
  EXPECT_EQ(run("DEL", allowed.dump(), "a", "p", args).exit_code, 0);
}

TEST_F(TenantNetnsTest, ANetworksFilesStayBeneathTheNodesRoots) {
  const fs::path victim = tmp_.path() / "victim";
  std::ofstream(victim) << "precious\n";
  const fs::path elsewhere = tmp_.path() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directories(devinfo_dir());
  fs::create_symlink(elsewhere, fs::path(devinfo_dir()) / "cni");
  auto conf = [&](const std::string& key, const std::string& path) {
    json c = json::parse(fmt::format(R"({{"cniVersion": "1.1.0", "name": "hd", "type": "rdmanet",
      "device": "{}"}})",
                                     dev_));
    if (key == "CNIDeviceInfoFile") {
      c["runtimeConfig"][key] = path;
    } else {
      c[key] = path;
    }
    return c.dump();
  };
  for (const auto& [key, path] : std::vector<std::pair<std::string, std::string>>{
           {"CNIDeviceInfoFile", victim.string()},
           {"CNIDeviceInfoFile", devinfo_dir() + "/cni/x_net1"},
           {"podInfoDir", "/etc/rdmanet-test-pod-info"}}) {
    const BinaryRun r = run("ADD", conf(key, path), "a", "p", podArgs(kOwnerUid, "p"));
    EXPECT_NE(r.exit_code, 0) << key << " " << path << ": " << r.out;
    EXPECT_TRUE(inHost(dev_)) << key << " " << path;
    EXPECT_FALSE(inPod("a")) << key << " " << path;
  }
  EXPECT_EQ(shOut("cat " + victim.string()), "precious\n");
  EXPECT_TRUE(fs::is_empty(elsewhere));
  EXPECT_FALSE(fs::exists("/etc/rdmanet-test-pod-info"));
}

// logFile: a symlink is not followed and a FIFO does not hang the ADD (it used to, forever).
TEST_F(TenantNetnsTest, ALogFileSymlinkOrFifoNeitherRedirectsNorBlocksTheAdd) {
  const fs::path log_root = tmp_.path() / "log";
  fs::create_directories(log_root);
  const fs::path victim = tmp_.path() / "victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, log_root / "link.log");
  ASSERT_EQ(::mkfifo((log_root / "fifo.log").c_str(), 0600), 0);
  for (const char* name : {"link.log", "fifo.log"}) {
    const std::string conf = fmt::format(R"({{"cniVersion": "1.1.0", "name": "hd",
      "type": "rdmanet", "device": "{}", "logLevel": "debug", "logFile": "{}"}})",
                                         dev_, (log_root / name).string());
    const BinaryRun add = run("ADD", conf, "a", "p", podArgs(kOwnerUid, "p"));
    ASSERT_EQ(add.exit_code, 0) << name << ": " << add.out;
    EXPECT_EQ(run("DEL", conf, "a", "p", podArgs(kOwnerUid, "p")).exit_code, 0) << name;
  }
  EXPECT_EQ(shOut("cat " + victim.string()), "precious\n");
}

// A delegate that hangs: killed at the node's ipamTimeoutMs, the ADD fails with 11 and undoes
// itself, and the device lock is free for the next ADD.
TEST_F(TenantNetnsTest, AHangingIpamDelegateIsKilledAndTheDeviceIsFreeAgain) {
  json node = nodeConf();
  node["ipamTimeoutMs"] = 500;
  writeNodeConf(node);
  const fs::path bin = tmp_.path() / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "hang") << "#!/bin/sh\necho $$ > " << (tmp_.path() / "hang.pid").string()
                              << "\nexec sleep 1000\n";
  fs::permissions(bin / "hang", fs::perms::owner_all);
  const std::string cni_path = bin.string() + ":" + binaryDir() + ":/usr/lib/cni";
  auto conf = [&](const std::string& ipam) {
    return fmt::format(R"({{"cniVersion": "1.0.0", "name": "hd", "type": "rdmanet",
      "device": "{}", "ipam": {}}})",
                       dev_, ipam);
  };
  const BinaryRun hung =
      run("ADD", conf(R"({"type": "hang"})"), "a", "c1", podArgs(kOwnerUid, "p"), cni_path);
  ASSERT_NE(hung.exit_code, 0) << hung.out;
  EXPECT_EQ(hung.doc["code"], 11) << hung.out;
  EXPECT_NE(hung.out.find("did not finish within 500 ms"), std::string::npos) << hung.out;
  EXPECT_TRUE(inHost(dev_));
  std::string pid = shOut("cat " + (tmp_.path() / "hang.pid").string());
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  ASSERT_FALSE(pid.empty());
  EXPECT_NE(sh("kill -0 " + pid), 0) << "the delegate still runs";
  const std::string ok_conf =
      conf(R"({"type": "static", "addresses": [{"address": "10.81.0.9/24"}]})");
  const BinaryRun next = run("ADD", ok_conf, "b", "c2", podArgs(kOwnerUid, "p"), cni_path);
  ASSERT_EQ(next.exit_code, 0) << next.out;
  EXPECT_EQ(run("DEL", ok_conf, "b", "c2", podArgs(kOwnerUid, "p"), cni_path).exit_code, 0);
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
}

}  // namespace
}  // namespace rdmanet::cni::testing
