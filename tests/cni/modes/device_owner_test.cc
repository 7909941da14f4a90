// A pod gets only what was given to it (cni/modes/device_owner.h, cni/pod/kubelet_checkpoint.h):
// a device the pod named itself (runtimeConfig.deviceID, as Multus copies a network annotation's
// deviceID when the pod requested no resource) is attached only when kubelet allocated it to this
// pod or the pod's DRA records name it; a MAC or IPs the pod chose only when the network opts in.
#include "cni/modes/device_owner.h"

#include <fmt/format.h>

#include <fstream>

#include "cni/pod/kubelet_checkpoint.h"
#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOwner = "0b3e3a64-7d53-4d0c-9e0a-0f1f2e3d4c5b";
constexpr const char* kThief = "7c9a1f20-2b8e-4e55-a0c4-5d6e7f809112";

std::string argsOf(const std::string& uid, const std::string& name) {
  return fmt::format("IgnoreUnknown=1;K8S_POD_NAMESPACE=tenant-b;K8S_POD_NAME={};K8S_POD_UID={}",
                     name, uid);
}

class DeviceOwnerTest : public PluginTest {
 protected:
  fs::path checkpoint() const { return deps_->node.kubelet_checkpoint; }
  // Kubelet's device-manager checkpoint (kubelet >= 1.20 shape) with one entry per pod.
  void writeCheckpoint(const json& entries) const {
    std::ofstream(checkpoint()) << json{
        {"Data", {{"PodDeviceEntries", entries}, {"RegisteredDevices", json::object()}}},
        {"Checksum", 1234567}}.dump();
  }
  static json entry(const std::string& uid, const json& ids) {
    return {{"PodUID", uid},
            {"ContainerName", "train"},
            {"ResourceName", "rdma.rdmanet.io/vf"},
            {"DeviceIDs", ids},
            {"AllocResp", "CgA="}};
  }
  // A network with no device of its own: the pod's annotation names one through runtimeConfig.
  static std::string podNamedConf(const std::string& pci, const std::string& extra = "") {
    return fmt::format(R"({{"cniVersion": "1.1.0", "name": "rdma-vf", "type": "rdmanet",
      "ipam": {{"type": "fake-ipam"}}, "runtimeConfig": {{"deviceID": "{}"}}{}}})",
                       pci, extra);
  }
  static std::string withRuntime(const std::string& conf, const char* key, const json& value) {
    json c = json::parse(conf);
    c["runtimeConfig"][key] = value;
    return c.dump();
  }
  Invocation addAs(const std::string& conf, const std::string& uid, const std::string& name,
                   const std::string& cid = "c1") {
    return invoke("ADD", conf, kPod, cid, "net1", {{"CNI_ARGS", argsOf(uid, name)}});
  }
};

// The reproduced hole: a pod of another namespace, with no rdmanet resource, named a VF the
// scheduler gave to another pod and got it. Now: a clear error, and the node as it was.
TEST_F(DeviceOwnerTest, APodNamingAnotherPodsVfGetsAClearErrorAndNothingIsAttached) {
  writeCheckpoint(json::array({entry(kOwner, {{"1", {"0000:81:10.2"}}})}));
  const World before = world();
  const Invocation add = addAs(podNamedConf("0000:81:10.2"), kThief, "thief");
  ASSERT_EQ(add.exit_code, 1) << add.stdout_data;
  const json err = json::parse(add.stdout_data);
  EXPECT_EQ(err["code"], 7);
  const std::string msg = err["msg"];
  EXPECT_NE(msg.find("0000:81:10.2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tenant-b/thief"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not allocated"), std::string::npos) << msg;
  EXPECT_EQ(world(), before) << dumpWorld(world());
  EXPECT_EQ(ipam_.count("ADD"), 0);
}

// A host-device network pinned to one NIC by pciBusID: the pod's runtimeConfig.deviceID used to
// win, giving it any PCI netdev of the node, the management NIC included.
TEST_F(DeviceOwnerTest, APodCannotSwapAPciBusIdNetworksDeviceForTheManagementNic) {
  const std::string conf = R"({"cniVersion": "1.1.0", "name": "hd", "type": "rdmanet",
    "mode": "host-device", "pciBusID": "0000:81:10.2", "ipam": {"type": "fake-ipam"},
    "runtimeConfig": {"deviceID": "0000:82:00.0"}})";
  const Invocation add = addAs(conf, kThief, "thief");
  ASSERT_EQ(add.exit_code, 1) << add.stdout_data;
  EXPECT_NE(add.stdout_data.find("0000:82:00.0"), std::string::npos) << add.stdout_data;
  EXPECT_TRUE(kernel_.link(FakeKernel::kHost, "ens2f0").has_value());
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());
}

TEST_F(DeviceOwnerTest, ThePodsOwnKubeletAllocatedVfIsAttached) {
  writeCheckpoint(json::array({entry(kThief, {{"0", {"0000:81:10.0"}}}),
                               entry(kOwner, {{"1", {"0000:81:10.0", "0000:81:10.2"}}})}));
  const Invocation add = addAs(podNamedConf("0000:81:10.2"), kOwner, "owner");
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_EQ(json::parse(add.stdout_data)["interfaces"][0]["pciID"], "0000:81:10.2");
  EXPECT_TRUE(kernel_.link("pod1", "net1").has_value());
}

// Kubelets before 1.20 wrote DeviceIDs as a plain list; device plugins spell PCI addresses in
// either case.
TEST_F(DeviceOwnerTest, AnOlderKubeletsListOfIdsCountsAndIdsCompareAsPciAddresses) {
  writeCheckpoint(json::array({entry(kOwner, {"0000:81:10.2"})}));
  EXPECT_EQ(addAs(podNamedConf("0000:81:10.2"), kOwner, "owner").exit_code, 0);
  auto upper = kubeletAllocated(checkpoint(), kOwner, PciAddress::parse("0000:81:10.2").value());
  ASSERT_TRUE(upper.ok());
  EXPECT_TRUE(*upper);
}

TEST_F(DeviceOwnerTest, AVfInThePodsDraRecordsIsItsOwn) {
  const fs::path dra = tmp_.path() / "dra-devices";
  fs::create_directories(dra / kOwner);
  std::ofstream(dra / kOwner / "claim-1.json")
      << json{{"claim", {{"namespace", "tenant-b"}, {"name", "nic"}, {"uid", "claim-1"}}},
              {"devices", json::array({{{"request", "nic"},
                                        {"resourceName", "rdma/vf"},
                                        {"pciAddress", "0000:81:10.2"},
                                        {"device", "pci-0000-81-10-2"}}})}}
             .dump();
  const std::string extra =
      fmt::format(R"(, "draDevicesDir": "{}", "resourceName": "rdma/vf")", dra.string());
  EXPECT_NE(addAs(podNamedConf("0000:81:10.2", extra), kThief, "thief").exit_code, 0);
  const Invocation add = addAs(podNamedConf("0000:81:10.2", extra), kOwner, "owner");
  EXPECT_EQ(add.exit_code, 0) << add.stdout_data;
}

TEST_F(DeviceOwnerTest, WithoutAPodUidNoDeviceIsThePods) {
  writeCheckpoint(json::array({entry(kOwner, {{"1", {"0000:81:10.2"}}})}));
  const Invocation add = invoke("ADD", podNamedConf("0000:81:10.2"));
  ASSERT_EQ(add.exit_code, 1);
  EXPECT_NE(add.stdout_data.find("K8S_POD_UID"), std::string::npos) << add.stdout_data;
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());
}

// What Multus passes for a network with a resource: the allocated device in deviceID, pciBusID
// and (with the capability) runtimeConfig.deviceID alike. Nothing for the pod to prove.
TEST_F(DeviceOwnerTest, TheDeviceMultusResolvedFromKubeletNeedsNoCheckpoint) {
  const std::string conf = R"({"cniVersion": "1.1.0", "name": "rdma-vf", "type": "rdmanet",
    "deviceID": "0000:81:10.2", "pciBusID": "0000:81:10.2", "ipam": {"type": "fake-ipam"},
    "runtimeConfig": {"deviceID": "0000:81:10.2"}})";
  ASSERT_FALSE(fs::exists(checkpoint()));
  EXPECT_EQ(addAs(conf, kThief, "any").exit_code, 0);
}

// Kubelet's file, read as untrusted input: whatever its shape, it owns nothing it does not say.
TEST_F(DeviceOwnerTest, AMalformedCheckpointOwnsNothing) {
  const PciAddress vf = PciAddress::parse("0000:81:10.2").value();
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"not JSON", "{\"Data\": "},
      {"an array", "[1, 2]"},
      {"no entries", R"({"Data": {}})"},
      {"entries not a list", R"({"Data": {"PodDeviceEntries": {"a": 1}}})"},
      {"uid a number",
       R"({"Data": {"PodDeviceEntries": [{"PodUID": 7, "DeviceIDs": ["0000:81:10.2"]}]}})"},
      {"ids a string", fmt::format(R"({{"Data": {{"PodDeviceEntries": [{{"PodUID": "{}",
          "DeviceIDs": "0000:81:10.2"}}]}}}})",
                                   kOwner)},
      {"ids nested too deep", fmt::format(R"({{"Data": {{"PodDeviceEntries": [{{"PodUID": "{}",
          "DeviceIDs": {{"0": {{"x": ["0000:81:10.2"]}}}}}}]}}}})",
                                          kOwner)},
      {"an id not a string", fmt::format(R"({{"Data": {{"PodDeviceEntries": [{{"PodUID": "{}",
          "DeviceIDs": {{"0": [33]}}}}]}}}})",
                                         kOwner)},
      {"too deep", std::string(100, '[') + std::string(100, ']')},
  };
  for (const auto& [name, text] : cases) {
    std::ofstream(checkpoint(), std::ios::trunc) << text;
    std::string why;
    auto r = kubeletAllocated(checkpoint(), kOwner, vf, &why);
    ASSERT_TRUE(r.ok()) << name << ": " << r.error().msg;
    EXPECT_FALSE(*r) << name;
    EXPECT_FALSE(why.empty()) << name;
  }
  // Over the size cap: an error naming it, not a huge read.
  std::ofstream(checkpoint(), std::ios::trunc) << std::string(kMaxKubeletCheckpointBytes + 1, ' ');
  EXPECT_FALSE(kubeletAllocated(checkpoint(), kOwner, vf).ok());
  // A symlink where the checkpoint should be is not followed.
  fs::remove(checkpoint());
  writeCheckpoint(json::array({entry(kOwner, {{"1", {"0000:81:10.2"}}})}));
  fs::rename(checkpoint(), tmp_.path() / "real");
  fs::create_symlink(tmp_.path() / "real", checkpoint());
  EXPECT_FALSE(kubeletAllocated(checkpoint(), kOwner, vf).ok());
}

// --- A MAC and IPs the pod chose: only behind the network's allowPodMac / allowPodIPs. --------

TEST_F(DeviceOwnerTest, APodChosenMacIsRefusedWithoutAllowPodMacOnEveryChannel) {
  const std::string mac = "02:00:00:00:66:66";
  const World before = world();
  struct Channel {
    const char* name;
    std::string conf;
    std::string cni_args;
  };
  const std::vector<Channel> channels = {
      {"runtimeConfig.mac", withRuntime(sriovConf(), "mac", mac), ""},
      {"args.cni.mac", sriovConf(fmt::format(R"(, "args": {{"cni": {{"mac": "{}"}}}})", mac)), ""},
      {"CNI_ARGS MAC", sriovConf(), "IgnoreUnknown=1;MAC=" + mac},
  };
  for (const Channel& ch : channels) {
    std::map<std::string, std::string> env;
    if (!ch.cni_args.empty()) env["CNI_ARGS"] = ch.cni_args;
    const Invocation add = invoke("ADD", ch.conf, kPod, "c1", "net1", env);
    ASSERT_EQ(add.exit_code, 1) << ch.name << ": " << add.stdout_data;
    const json err = json::parse(add.stdout_data);
    EXPECT_EQ(err["code"], 7) << ch.name;
    EXPECT_NE(err["msg"].get<std::string>().find("allowPodMac"), std::string::npos) << ch.name;
    EXPECT_EQ(world(), before) << ch.name;
    // DEL must still finish with the same input.
    EXPECT_EQ(invoke("DEL", ch.conf, kPod, "c1", "net1", env).exit_code, 0) << ch.name;
  }
}

TEST_F(DeviceOwnerTest, AllowPodMacLetsThePodSetItsVfsMac) {
  const std::string conf =
      sriovConf(R"(, "allowPodMac": true, "args": {"cni": {"mac": "02:00:00:00:66:66"}})");
  const Invocation add = invoke("ADD", conf);
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_EQ(kernel_.link("pod1", "net1")->info.mac.str(), "02:00:00:00:66:66");
}

TEST_F(DeviceOwnerTest, PodChosenIpsAreRefusedWithoutAllowPodIPs) {
  const std::string ips = R"(["10.9.9.9/24"])";
  const std::vector<std::pair<const char*, std::string>> confs = {
      {"runtimeConfig.ips", macvlanConf(fmt::format(R"(, "runtimeConfig": {{"ips": {}}})", ips))},
      {"args.cni.ips", macvlanConf(fmt::format(R"(, "args": {{"cni": {{"ips": {}}}}})", ips))},
  };
  for (const auto& [name, conf] : confs) {
    const Invocation add = invoke("ADD", conf);
    ASSERT_EQ(add.exit_code, 1) << name;
    EXPECT_NE(add.stdout_data.find("allowPodIPs"), std::string::npos) << add.stdout_data;
  }
  const Invocation by_arg = invoke("ADD", macvlanConf(), kPod, "c1", "net1",
                                   {{"CNI_ARGS", "IgnoreUnknown=1;IP=10.9.9.9"}});
  ASSERT_EQ(by_arg.exit_code, 1);
  EXPECT_NE(by_arg.stdout_data.find("allowPodIPs"), std::string::npos) << by_arg.stdout_data;
  EXPECT_FALSE(kernel_.link("pod1", "net1").has_value());
  const Invocation allowed = invoke(
      "ADD",
      macvlanConf(fmt::format(R"(, "allowPodIPs": true, "runtimeConfig": {{"ips": {}}})", ips)));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.stdout_data;
}

}  // namespace
}  // namespace rdmanet::cni::testing
