// The real binary on the real kernel (label netns): macvlan and host-device with Debian's
// host-local and static IPAM, pods pinging each other, DEL twice, DEL after the netns is gone,
// DEL after the state file is lost, GC, and nothing left behind. Uses its own veths and throw-away
// namespaces; root only.
#include "tests/cni/netns_fixture.h"

namespace rdmanet::cni::testing {
namespace {

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

// Issue 13 item 2: CNI_NETNS naming the host's own namespace, directly or through a bind mount,
// is refused with code 4 before anything is touched; DEL there never enters it.
TEST_F(NetnsTest, AHostNamespaceIsNeverAPodNamespace) {
  const std::string m = tag_ + "m", mp = tag_ + "mp";
  vethPair(m, mp);
  const std::string bound = (tmp_.path() / "hostns").string();
  ASSERT_EQ(sh("touch " + bound + " && mount --bind /proc/self/ns/net " + bound), 0);
  struct Unmount {
    std::string path;
    ~Unmount() { sh("umount " + path); }
  } unmount{bound};
  const std::string ifname = tag_ + "x";
  // (/proc/1/ns/net is refused the same way where init shares our namespace; a test runner in
  // a container may not even be allowed to open it.)
  for (const std::string& netns : {std::string("/proc/self/ns/net"), bound}) {
    const BinaryRun r = runRdmanet(
        "ADD", macvlanConf(m),
        {{"CNI_CONTAINERID", "ch"}, {"CNI_NETNS", netns}, {"CNI_IFNAME", ifname}}, state_dir());
    EXPECT_EQ(r.doc["code"], 4) << netns << ": " << r.out;
    EXPECT_NE(r.out.find("host"), std::string::npos) << r.out;
    EXPECT_NE(sh("ip link show " + ifname), 0) << netns;  // no eth1 in the host
    EXPECT_EQ(shOut("ip -o link show type macvlan | grep '@" + m + ":'"), "");
    EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
  }
  // A host link of CNI_IFNAME's name, of the kind DEL would remove from a pod, survives a DEL.
  ASSERT_EQ(sh("ip link add " + ifname + " link " + m + " type macvlan mode bridge"), 0);
  links_.push_back(ifname);
  const BinaryRun del = runRdmanet(
      "DEL", macvlanConf(m),
      {{"CNI_CONTAINERID", "ch"}, {"CNI_NETNS", bound}, {"CNI_IFNAME", ifname}}, state_dir());
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_EQ(sh("ip link show " + ifname), 0);
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
}

// Issue 13 items 3 and 4: a netconf past a limit (a 5 MiB string, 100,000 nested arrays) is
// refused by ADD with code 7 and leaves nothing, and one at the size limit is released by DEL.
TEST_F(NetnsTest, ConfigsPastTheLimitsAreRefusedAndOneAtTheLimitIsReleased) {
  const std::string m = tag_ + "m", mp = tag_ + "mp";
  vethPair(m, mp);
  const json base = json::parse(macvlanConf(m));
  json huge = base;
  huge["x"] = std::string(5 << 20, 'a');
  std::string deep = base.dump();
  deep.pop_back();  // the closing brace
  deep += R"(,"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  for (const std::string& conf : {huge.dump(), deep}) {
    const BinaryRun add = cni("ADD", conf, "a", "ca");
    EXPECT_EQ(add.exit_code, 1) << add.out.substr(0, 200);  // an error, not a crash
    EXPECT_EQ(add.doc["code"], 7) << add.out.substr(0, 200);
    EXPECT_EQ(sh("ip netns exec " + nsName("a") + " ip link show net1"), 1);
    EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
  }
  // As large as accepted: strings up to the limit in "ipam" (the delegate gets them too).
  json big = base;
  for (int i = 0; big.dump().size() + kMaxJsonStringBytes + 64 < kMaxConfigBytes; ++i) {
    big["ipam"]["s" + std::to_string(i)] = std::string(kMaxJsonStringBytes, 'a');
  }
  const BinaryRun add = cni("ADD", big.dump(), "a", "ca");
  ASSERT_EQ(add.exit_code, 0) << add.out.substr(0, 300);
  const BinaryRun del = cni("DEL", big.dump(), "a", "ca");
  EXPECT_EQ(del.exit_code, 0) << del.out.substr(0, 300);
  EXPECT_EQ(sh("ip netns exec " + nsName("a") + " ip link show net1"), 1);
  EXPECT_TRUE(leftovers().empty()) << ::testing::PrintToString(leftovers());
}

}  // namespace
}  // namespace rdmanet::cni::testing
