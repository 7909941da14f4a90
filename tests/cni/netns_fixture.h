#pragma once
// The fixture of the tests that run the real `rdmanet` binary on the real kernel (label netns):
// two throw-away namespaces, veths made on demand, a state dir and a host-local data dir of its
// own, and what is left of an attachment afterwards. Root only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/cni/cni_binary.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni::testing {
namespace fs = std::filesystem;

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "netns tests need root";
    if (sh("which ping") != 0) GTEST_SKIP() << "ping (iputils-ping) is not installed";
    tag_ = "r" + std::to_string(::getpid() % 100000);
    writeNodeConf();
    for (const char* p : {"a", "b"}) {
      const std::string ns = nsName(p);
      ASSERT_EQ(sh("ip netns add " + ns), 0) << ns;
      netns_.push_back(ns);
    }
  }
  void TearDown() override {
    for (const auto& ns : netns_) sh("ip netns del " + ns);
    for (const auto& l : links_) sh("ip link del " + l);
  }

  std::string nsName(const std::string& p) const { return "rdmanet-" + tag_ + p; }
  std::string nsPath(const std::string& p) const { return "/var/run/netns/" + nsName(p); }
  // A veth pair, both ends up, in the host.
  void vethPair(const std::string& a, const std::string& b) {
    ASSERT_EQ(sh("ip link add " + a + " type veth peer name " + b), 0);
    links_.push_back(a);
    ASSERT_EQ(sh("ip link set " + a + " up && ip link set " + b + " up"), 0);
  }
  // `extra`: more environment (RDMANET_SYSFS_ROOT, RDMANET_BOOT_ID_FILE, ...).
  BinaryRun cni(const std::string& cmd, const std::string& conf, const std::string& pod,
                const std::string& cid, const std::string& ifname = "net1",
                std::map<std::string, std::string> extra = {}) {
    extra["CNI_CONTAINERID"] = cid;
    extra["CNI_NETNS"] = pod.empty() ? "" : nsPath(pod);
    extra["CNI_IFNAME"] = ifname;
    extra["CNI_ARGS"] = "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p";
    return runRdmanet(cmd, conf, std::move(extra), state_dir());
  }
  std::string state_dir() const { return (tmp_.path() / "state").string(); }
  // The node's settings (cni/conf/node_config.h), the test's own: the roots beneath which a
  // network's device-info file, pod-info dir, DRA records dir and log must stay, and kubelet's
  // checkpoint.
  json nodeConf() const {
    return {{"devinfoRoot", devinfo_dir()},
            {"podInfoRoot", tmp_.path().string()},
            {"draDevicesRoot", tmp_.path().string()},
            {"logRoot", (tmp_.path() / "log").string()},
            {"kubeletCheckpoint", checkpoint()}};
  }
  void writeNodeConf(const json& conf) const {
    fs::create_directories(state_dir());
    std::ofstream(fs::path(state_dir()) / "node.conf") << conf.dump();
  }
  void writeNodeConf() const { writeNodeConf(nodeConf()); }
  std::string checkpoint() const { return (tmp_.path() / "kubelet_internal_checkpoint").string(); }
  std::string ipam_dir() const { return (tmp_.path() / "ipam").string(); }
  std::string macvlanConf(const std::string& master, const std::string& version = "1.1.0") const {
    return R"({"cniVersion": ")" + version + R"(", "name": "mvnet", "type": "rdmanet",
      "master": ")" +
           master + R"(", "mode": "bridge", "mtu": 1400,
      "ipam": {"type": "host-local", "subnet": "10.77.0.0/24", "dataDir": ")" +
           ipam_dir() + R"("}})";
  }
  static std::string withPrev(const std::string& conf, const json& prev) {
    json c = json::parse(conf);
    c["prevResult"] = prev;
    return c.dump();
  }
  std::string devinfo_dir() const { return (tmp_.path() / "devinfo").string(); }
  // What an attachment may leave behind and must not: state, lock, temp and device-info files,
  // and host-local leases. (The IPAM version cache, ipam/<type>.json, is meant to stay.)
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(state_dir(), ec)) {
      const std::string rel = fs::relative(e.path(), state_dir()).string();
      if (!e.is_regular_file()) continue;
      if (rel.rfind("ipam/", 0) == 0 && e.path().extension() == ".json") continue;
      if (rel == "node.conf") continue;
      out.push_back("state/" + rel);
    }
    for (const auto& e : fs::directory_iterator(devinfo_dir(), ec)) {
      out.push_back("devinfo/" + e.path().filename().string());
    }
    for (const auto& e : fs::recursive_directory_iterator(ipam_dir(), ec)) {
      const std::string n = e.path().filename();
      if (e.is_regular_file() && n != "lock" && n.rfind("last_reserved_ip", 0) != 0) {
        out.push_back(n);
      }
    }
    return out;
  }
  std::string addressOf(const json& add) const {
    const std::string a = add["ips"][0]["address"];
    return a.substr(0, a.find('/'));
  }

  sim::TempDir tmp_{"rdmanet-netns"};
  std::string tag_;
  std::vector<std::string> netns_;
  std::vector<std::string> links_;
};

}  // namespace rdmanet::cni::testing
