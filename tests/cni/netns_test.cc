// The real binary on the real kernel (label netns): macvlan and host-device with Debian's
// host-local and static IPAM, pods pinging each other, DEL twice, DEL after the netns is gone,
// DEL after the state file is lost, GC, and nothing left behind. Uses its own veths and throw-away
// namespaces; root only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/cni/cni_binary.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "netns tests need root";
    if (sh("which ping") != 0) GTEST_SKIP() << "ping (iputils-ping) is not installed";
    tag_ = "r" + std::to_string(::getpid() % 100000);
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
  BinaryRun cni(const std::string& cmd, const std::string& conf, const std::string& pod,
                const std::string& cid, const std::string& ifname = "net1") {
    return runRdmanet(cmd, conf,
                      {{"CNI_CONTAINERID", cid},
                       {"CNI_NETNS", pod.empty() ? "" : nsPath(pod)},
                       {"CNI_IFNAME", ifname},
                       {"CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p"}},
                      state_dir());
  }
  std::string state_dir() const { return (tmp_.path() / "state").string(); }
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
  // Attachment state files and host-local leases that are still there.
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(state_dir(), ec)) {
      if (e.path().extension() == ".json") out.push_back(e.path().filename());
    }
    for (const auto& e : fs::recursive_directory_iterator(ipam_dir(), ec)) {
      const std::string n = e.path().filename();
      if (e.is_regular_file() && n != "lock" && n.rfind("last_reserved_ip", 0) != 0) {
        out.push_back(n);
      }
    }
    for (const auto& e : fs::directory_iterator(fs::path(state_dir()) / "vlan", ec)) {
      out.push_back(e.path().filename());
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

TEST_F(NetnsTest, MacvlanWithHostLocalTwoPodsPingAndNothingIsLeftBehind) {
  const std::string m = tag_ + "m", mp = tag_ + "mp";
  vethPair(m, mp);
  const std::string conf = macvlanConf(m);
  const BinaryRun a = cni("ADD", conf, "a", "ca");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  const BinaryRun b = cni("ADD", conf, "b", "cb");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_EQ(a.doc["interfaces"][0]["mtu"], 1400);
  EXPECT_EQ(sh("ip netns exec " + nsName("a") + " ping -c1 -W2 " + addressOf(b.doc)), 0);
  EXPECT_EQ(sh("ip netns exec " + nsName("b") + " ping -c1 -W2 " + addressOf(a.doc)), 0);

  const BinaryRun check = cni("CHECK", withPrev(conf, a.doc), "a", "ca");
  EXPECT_EQ(check.exit_code, 0) << check.out;

  EXPECT_EQ(cni("DEL", withPrev(conf, a.doc), "a", "ca").exit_code, 0);
  EXPECT_EQ(cni("DEL", withPrev(conf, b.doc), "b", "cb").exit_code, 0);
  EXPECT_EQ(sh("ip netns exec " + nsName("a") + " ip link show net1"), 1);
  EXPECT_EQ(shOut("ip -o link show type macvlan | grep '@" + m + ":'"), "");
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
}

TEST_F(NetnsTest, HostDeviceWithStaticIpamPingsAndComesBackUnderItsName) {
  const std::string h1 = tag_ + "h1", h2 = tag_ + "h2";
  vethPair(h1, h2);
  const std::string mac1 = shOut("cat /sys/class/net/" + h1 + "/address");
  auto conf = [](const std::string& dev, const std::string& ip) {
    return R"({"cniVersion": "1.0.0", "name": "hdnet", "type": "rdmanet", "device": ")" + dev +
           R"(", "ipam": {"type": "static", "addresses": [{"address": ")" + ip + R"("}]}})";
  };
  const BinaryRun a = cni("ADD", conf(h1, "10.79.0.1/24"), "a", "ca");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  const BinaryRun b = cni("ADD", conf(h2, "10.79.0.2/24"), "b", "cb");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_NE(sh("ip link show " + h1), 0);  // gone from the host
  EXPECT_EQ(sh("ip netns exec " + nsName("a") + " ping -c1 -W2 10.79.0.2"), 0);
  EXPECT_EQ(cni("CHECK", withPrev(conf(h1, "10.79.0.1/24"), a.doc), "a", "ca").exit_code, 0);

  EXPECT_EQ(cni("DEL", conf(h1, "10.79.0.1/24"), "a", "ca").exit_code, 0);
  EXPECT_EQ(cni("DEL", conf(h2, "10.79.0.2/24"), "b", "cb").exit_code, 0);
  EXPECT_EQ(sh("ip link show " + h1), 0);
  EXPECT_EQ(sh("ip link show " + h2), 0);
  EXPECT_EQ(shOut("cat /sys/class/net/" + h1 + "/address"), mac1);
  EXPECT_EQ(shOut("ip -o addr show dev " + h1 + " | grep 10.79"), "");
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(NetnsTest, DoubleDelAndDelAfterTheNetnsIsDeleted) {
  const std::string m = tag_ + "m", mp = tag_ + "mp";
  vethPair(m, mp);
  const std::string conf = macvlanConf(m, "0.4.0");
  const BinaryRun a = cni("ADD", conf, "a", "ca");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(a.doc["ips"][0]["version"], "4");
  ASSERT_EQ(sh("ip netns del " + nsName("a")), 0);
  const BinaryRun del = cni("DEL", withPrev(conf, a.doc), "a", "ca");
  EXPECT_EQ(del.exit_code, 0) << del.out;
  const BinaryRun again = cni("DEL", withPrev(conf, a.doc), "", "ca");
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
}

// The state file lost (a wiped /var/lib/cni) while the pods still exist. A macvlan needs no
// record: DEL deletes it and releases the lease. A veth that host-device moved is not a device
// the kernel ties to a bus address, so DEL cannot prove it is ours and leaves it in the pod
// (a real VF or NIC comes back: tests/vm/cni_sriov.sh and cni_host_device_vlan.sh).
TEST_F(NetnsTest, DelWithoutAStateFile) {
  const std::string m = tag_ + "m", mp = tag_ + "mp", h = tag_ + "h", hp = tag_ + "hp";
  vethPair(m, mp);
  vethPair(h, hp);
  const std::string mconf = macvlanConf(m);
  const std::string hconf =
      R"({"cniVersion": "1.1.0", "name": "hdnet", "type": "rdmanet", "device": ")" + h + R"("})";
  ASSERT_EQ(cni("ADD", mconf, "a", "ca").exit_code, 0);
  ASSERT_EQ(cni("ADD", hconf, "b", "cb").exit_code, 0);
  for (const auto& e : fs::directory_iterator(state_dir())) {
    if (e.path().extension() == ".json") fs::remove(e.path());
  }
  const BinaryRun mdel = cni("DEL", mconf, "a", "ca");
  EXPECT_EQ(mdel.exit_code, 0) << mdel.out;
  EXPECT_NE(sh("ip netns exec " + nsName("a") + " ip link show net1"), 0);
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());

  const BinaryRun hdel = cni("DEL", hconf, "b", "cb");
  EXPECT_EQ(hdel.exit_code, 0) << hdel.out;
  EXPECT_EQ(sh("ip netns exec " + nsName("b") + " ip link show net1"), 0);  // left alone
}

TEST_F(NetnsTest, AddToAMissingNetnsIsCode3AndLeavesNothing) {
  const std::string m = tag_ + "m", mp = tag_ + "mp";
  vethPair(m, mp);
  const BinaryRun r = runRdmanet("ADD", macvlanConf(m),
                                 {{"CNI_CONTAINERID", "cx"},
                                  {"CNI_NETNS", "/var/run/netns/rdmanet-does-not-exist"},
                                  {"CNI_IFNAME", "net1"}},
                                 state_dir());
  ASSERT_NE(r.exit_code, 0);
  EXPECT_EQ(r.doc["code"], 3) << r.out;
  const BinaryRun notns = runRdmanet(
      "ADD", macvlanConf(m),
      {{"CNI_CONTAINERID", "cx"}, {"CNI_NETNS", "/etc/hostname"}, {"CNI_IFNAME", "net1"}},
      state_dir());
  ASSERT_NE(notns.exit_code, 0);
  EXPECT_EQ(notns.doc["code"], 4) << notns.out;
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(NetnsTest, GcReleasesTheStaleAttachmentOnly) {
  const std::string m = tag_ + "m", mp = tag_ + "mp";
  vethPair(m, mp);
  const std::string conf = macvlanConf(m);
  ASSERT_EQ(cni("ADD", conf, "a", "keep").exit_code, 0);
  ASSERT_EQ(cni("ADD", conf, "b", "stale").exit_code, 0);
  json gc = json::parse(conf);
  gc["cni.dev/valid-attachments"] = json::array({{{"containerID", "keep"}, {"ifname", "net1"}}});
  const BinaryRun r = runRdmanet("GC", gc.dump(), {}, state_dir());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(sh("ip netns exec " + nsName("a") + " ip link show net1"), 0);
  EXPECT_NE(sh("ip netns exec " + nsName("b") + " ip link show net1"), 0);
  EXPECT_EQ(leftovers().size(), 2u);  // keep's state file and its lease
  EXPECT_EQ(cni("DEL", conf, "a", "keep").exit_code, 0);
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(NetnsTest, StatusReportsAMissingOrDownMaster) {
  const std::string m = tag_ + "m", mp = tag_ + "mp";
  vethPair(m, mp);
  EXPECT_EQ(runRdmanet("STATUS", macvlanConf(m), {}, state_dir()).exit_code, 0);
  ASSERT_EQ(sh("ip link set " + mp + " down"), 0);  // m loses carrier
  EXPECT_EQ(runRdmanet("STATUS", macvlanConf(m), {}, state_dir()).doc["code"], 51);
  EXPECT_EQ(runRdmanet("STATUS", macvlanConf(tag_ + "zz"), {}, state_dir()).doc["code"], 50);
}

}  // namespace
}  // namespace rdmanet::cni::testing
