// What a pod's workload learns under Multus (cni/pod/pod_info.h): the netconf and CNI_ARGS exactly
// as Multus v4.1.4 passes them (deviceID and pciBusID of the allocated VF, runtimeConfig for the
// declared capabilities, every CNI_ARGS key twice), the pod info files ADD writes into the
// device's directory, DEL's cleanup, and host-device's device-info naming the PF.
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "tests/cni/plugin_fixture.h"

namespace rdmanet::cni::testing {
namespace {

// Multus's own keys, then the runtime's as a real run of Multus v4.1.4 showed.
const std::map<std::string, std::string> kMultusArgs = {
    {"CNI_ARGS",
     "IgnoreUnknown=true;K8S_POD_NAMESPACE=default;K8S_POD_NAME=train-0;"
     "K8S_POD_INFRA_CONTAINER_ID=c1;K8S_POD_UID=6f1c;IgnoreUnknown=1;K8S_POD_NAMESPACE=default;"
     "K8S_POD_NAME=train-0;K8S_POD_INFRA_CONTAINER_ID=c1;K8S_POD_UID=6f1c"}};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int modeOf(const std::filesystem::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
}

class PodInfoTest : public PluginTest {
 protected:
  std::filesystem::path root() const { return tmp_.path() / "pod-info"; }
  std::filesystem::path dir() const { return root() / "0000:81:10.0"; }
  // The delegate netconf Multus builds from the chart's NAD for an allocated VF.
  std::string multusConf() const {
    return R"({"cniVersion": "1.0.0", "name": "rdma-vf", "type": "rdmanet", "mode": "sriov",
      "capabilities": {"CNIDeviceInfoFile": true, "deviceID": true},
      "deviceID": "0000:81:10.0", "pciBusID": "0000:81:10.0", "vlan": 100, "mtu": 9000,
      "lossless": {"priority": 3, "check": "warn"}, "podInfoDir": ")" +
           root().string() + R"(", "ipam": {"type": "fake-ipam"},
      "runtimeConfig": {"deviceID": "0000:81:10.0", "CNIDeviceInfoFile": ")" +
           (tmp_.path() / "devinfo/default-rdma-vf-c1_net1").string() + R"("}})";
  }
};

TEST_F(PodInfoTest, MultusShapedAddWritesTheNcclFactsForTheContainer) {
  const Invocation add = invoke("ADD", multusConf(), kPod, "c1", "net1", kMultusArgs);
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  const std::string env = slurp(dir() / "rdmanet.env");
  EXPECT_NE(env.find("NCCL_IB_GID_INDEX=3\n"), std::string::npos) << env;  // GID of 10.56.0.2
  EXPECT_NE(env.find("NCCL_IB_SL=3\n"), std::string::npos) << env;
  EXPECT_NE(env.find("RDMANET_IP=10.56.0.2\n"), std::string::npos) << env;
  EXPECT_NE(env.find("RDMANET_PCP=3\n"), std::string::npos) << env;
  EXPECT_NE(env.find("RDMANET_VLAN=100\n"), std::string::npos) << env;
  EXPECT_NE(env.find("RDMANET_RDMA_DEVICE=mlx5_1\n"), std::string::npos) << env;
  EXPECT_NE(env.find("RDMANET_IFNAME=net1\n"), std::string::npos) << env;
  const json info = json::parse(slurp(dir() / "rdmanet.json"));
  EXPECT_EQ(info["roce-v2-gid-index"], 3);
  EXPECT_EQ(info["pci-address"], "0000:81:10.0");
  EXPECT_EQ(info["pf-pci-address"], "0000:81:00.0");
  EXPECT_EQ(info["ips"], json::array({"10.56.0.2/24"}));
  if (info.contains("dscp")) {
    EXPECT_EQ(info["traffic-class"], info["dscp"].get<int>() << 2);
  }
  // Readable by a container of any user, writable by root only; nothing else in the directory.
  EXPECT_EQ(modeOf(dir()), 0755);
  EXPECT_EQ(modeOf(dir() / "rdmanet.env"), 0644);
  EXPECT_EQ(modeOf(dir() / "rdmanet.json"), 0644);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir())) ++files;
  EXPECT_EQ(files, 2);
  // The CNI's own device-info file, which Multus prefers over the device plugin's.
  const json d = json::parse(slurp(tmp_.path() / "devinfo/default-rdma-vf-c1_net1"));
  EXPECT_EQ(d["pci"]["pci-address"], "0000:81:10.0");
}

// The chart's default podInfoDir lives on /run: after a boot its parent is missing as well.
TEST_F(PodInfoTest, AddCreatesThePodInfoDirsMissingAncestors) {
  std::string conf = multusConf();
  const std::string deep = (tmp_.path() / "run/rdmanet/pod-info").string();
  conf.replace(conf.find(root().string()), root().string().size(), deep);
  const Invocation add = invoke("ADD", conf, kPod, "c1", "net1", kMultusArgs);
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(deep) / "0000:81:10.0/rdmanet.env"));
  EXPECT_EQ(modeOf(tmp_.path() / "run/rdmanet"), 0755);
}

TEST_F(PodInfoTest, DelRemovesThePodInfoFilesAndKeepsTheMountedDirectory) {
  ASSERT_EQ(invoke("ADD", multusConf(), kPod, "c1", "net1", kMultusArgs).exit_code, 0);
  ASSERT_EQ(invoke("DEL", multusConf(), kPod, "c1", "net1", kMultusArgs).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir() / "rdmanet.env"));
  EXPECT_FALSE(std::filesystem::exists(dir() / "rdmanet.json"));
  EXPECT_TRUE(std::filesystem::is_directory(dir()));
  EXPECT_EQ(invoke("DEL", multusConf(), kPod, "c1", "net1", kMultusArgs).exit_code, 0);
}

TEST_F(PodInfoTest, AFailedAddLeavesNoPodInfo) {
  ipam_.fail = json::parse(R"({"code": 11, "msg": "no address left"})");
  EXPECT_NE(invoke("ADD", multusConf(), kPod, "c1", "net1", kMultusArgs).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir() / "rdmanet.env"));
  EXPECT_FALSE(std::filesystem::exists(dir() / "rdmanet.json"));
}

TEST_F(PodInfoTest, RelativePodInfoDirIsRefusedWithCode7) {
  std::string conf = multusConf();
  conf.replace(conf.find(root().string()), root().string().size(), "pod-info");
  const Invocation add = invoke("ADD", conf, kPod, "c1", "net1", kMultusArgs);
  EXPECT_NE(add.exit_code, 0);
  EXPECT_EQ(json::parse(add.stdout_data)["code"], 7) << add.stdout_data;
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "pod-info"));
}

TEST_F(PodInfoTest, HostDeviceDeviceInfoNamesThePfOfAWholeVf) {
  const std::string conf = R"({"cniVersion": "1.0.0", "name": "hd", "type": "rdmanet",
    "mode": "host-device", "deviceID": "0000:81:10.0", "pciBusID": "0000:81:10.0",
    "ipam": {"type": "fake-ipam"}, "runtimeConfig": {"CNIDeviceInfoFile": ")" +
                           (tmp_.path() / "devinfo/hd.json").string() + R"("}})";
  const Invocation add = invoke("ADD", conf, kPod, "c1", "net1", kMultusArgs);
  ASSERT_EQ(add.exit_code, 0) << add.stdout_data;
  const json d = json::parse(slurp(tmp_.path() / "devinfo/hd.json"));
  EXPECT_EQ(d["pci"]["pci-address"], "0000:81:10.0");
  EXPECT_EQ(d["pci"]["pf-pci-address"], "0000:81:00.0");
}

}  // namespace
}  // namespace rdmanet::cni::testing
