// Event-driven health and membership against `rdmanet-simnode up`: real veths whose carrier the
// simulated node flips, seen by the plugin's netlink link monitor. Needs root (skips clearly
// otherwise); each test has its own --root and interface prefix, so it runs in parallel with
// other tests.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>

#include "common/base/sysfs.h"
#include "common/inventory/node.h"
#include "tests/deviceplugin/integration/harness.h"
#include "tests/fakes/eventually.h"
#include "tests/simnode/command.h"
#include "tests/simnode/sim_tree.h"

namespace rdmanet::dp::testing {
namespace {

namespace fs = std::filesystem;
using sim::runCommand;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class DpLinkIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the simulated node creates real veths";
    if (runCommand({"ip", "-V"}).rc != 0) GTEST_SKIP() << "needs iproute2 (`ip`)";
    const char* name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    prefix_ = fmt::format("d{:03x}{}", static_cast<unsigned>(::getpid()) & 0xfff,
                          static_cast<char>('a' + (std::hash<std::string>{}(name) % 26)));
    work_ = freshDir(name);
    root_ = work_ / "node";
    auto up = simnode({"up", "--ifprefix", prefix_, "--topology",
                       RDMANET_SOURCE_DIR "/hack/topologies/default.json"});
    ASSERT_EQ(up.rc, 0) << up.out;
    inv_ = scanNode(Sysfs(root_));
    args_ = {"--kubelet-dir", (work_ / "kubelet").string(), "--sysfs-root",   root_.string(),
             "--devinfo-dir", (work_ / "devinfo").string(), "--metrics-addr", "127.0.0.1:0"};
    plugin_ = std::make_unique<PluginProc>(args_, work_);
    kubelet_ = std::make_unique<FakeKubeletProc>(work_ / "kubelet", work_);
    ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();
  }
  void TearDown() override {
    kubelet_.reset();
    if (plugin_) {
      plugin_->child().signal(SIGTERM);
      EXPECT_EQ(plugin_->child().wait(10s), 0);
    }
    for (const auto& l : extra_links_) (void)runCommand({"ip", "link", "del", l});
    if (!root_.empty()) (void)simnode({"down"});
    if (!HasFailure() && !work_.empty()) fs::remove_all(work_);
  }
  sim::CommandResult simnode(std::vector<std::string> args) {
    args.insert(args.begin(), RDMANET_SIMNODE_BIN);
    args.push_back("--root");
    args.push_back(root_.string());
    return runCommand(args);
  }
  // The PCI address of the function owning netdev `name` (prefix added).
  std::string idOf(const std::string& name) {
    for (const auto& fn : inv_.nics) {
      for (const auto& n : fn.netdevs) {
        if (n.name == prefix_ + name) return fn.pci.address.str();
      }
    }
    ADD_FAILURE() << "no netdev " << name;
    return "";
  }
  // Flips a link and returns the ms until the stream showed `id` with that health.
  double flip(const std::string& netdev, bool up, const std::string& id) {
    size_t mark = kubelet_->mark();
    int64_t t0 = nowNs();
    auto r = simnode({"link", prefix_ + netdev, up ? "up" : "down"});
    EXPECT_EQ(r.rc, 0) << r.out;
    auto ev = kubelet_->waitEvent(
        [&](const Json& e) { return isEvent("devices", "rdma/vf")(e) && healthyOf(e, id) == up; },
        5s, mark);
    if (!ev) {
      ADD_FAILURE() << "no update for " << id << "\n" << plugin_->log();
      return 1e9;
    }
    return ((*ev)["t_ns"].get<int64_t>() - t0) / 1e6;
  }

  // The switch-side veth (in the simulated node's bridge namespace) of netdev `name` (prefix
  // added): the one whose ifindex is the netdev's iflink.
  std::string peerOf(const std::string& name) {
    auto iflink = Sysfs("/").readInt("/sys/class/net/" + prefix_ + name + "/iflink");
    auto out = runCommand({"ip", "-n", "rdmanet-sim-" + prefix_, "-o", "link", "show"});
    for (size_t pos = 0; iflink && pos < out.out.size();) {
      size_t end = out.out.find('\n', pos);
      const std::string line = out.out.substr(pos, end - pos);
      pos = end == std::string::npos ? out.out.size() : end + 1;
      const std::string head = fmt::format("{}: ", *iflink);
      if (!line.starts_with(head)) continue;
      const std::string rest = line.substr(head.size());
      return rest.substr(0, rest.find_first_of("@:"));
    }
    ADD_FAILURE() << "no peer of " << name << " in\n" << out.out;
    return "";
  }

  std::vector<std::string> args_;
  std::string prefix_;
  fs::path work_, root_;
  NodeInventory inv_;
  std::unique_ptr<PluginProc> plugin_;
  std::unique_ptr<FakeKubeletProc> kubelet_;
  std::vector<std::string> extra_links_;
};

// A PF's link is what a VF's traffic needs: its VFs turn Unhealthy within a second of it going
// down and back within a second of it coming up; Allocate of one of them meanwhile is refused.
TEST_F(DpLinkIntegrationTest, PfLinkDownAndUpSeenInTheStreamWithinOneSecond) {
  std::string id = idOf("ens1f0v1");
  double down_ms = flip("ens1f0", false, id);
  EXPECT_LT(down_ms, 1000);
  EXPECT_TRUE(kubelet_->command("wait-healthy rdma/vf 12 16"));
  EXPECT_FALSE(kubelet_->command("allocate rdma/vf " + id));
  auto ev = kubelet_->waitEvent(isEvent("allocate", "rdma/vf"), 1s);
  ASSERT_TRUE(ev);
  EXPECT_EQ((*ev)["error"]["code"], "UNAVAILABLE");
  double up_ms = flip("ens1f0", true, id);
  EXPECT_LT(up_ms, 1000);
  EXPECT_TRUE(kubelet_->command("wait-healthy rdma/vf 16 16"));
  RecordProperty("link_down_ms", std::to_string(down_ms));
  RecordProperty("link_up_ms", std::to_string(up_ms));
}

// A free VF being down is its normal state (nothing brings it up before a pod does): it stays
// Healthy and allocatable. The plugin handles link events in kernel order, so the device list
// it sends for a later PF going down already reflects the VF going down before it.
TEST_F(DpLinkIntegrationTest, AVfGoingDownStaysHealthyAndAllocatable) {
  std::string vf = idOf("ens1f0v1");
  auto r = simnode({"link", prefix_ + "ens1f0v1", "down"});
  ASSERT_EQ(r.rc, 0) << r.out;
  flip("ens2f1", false, idOf("ens2f1v0"));  // a later event on another PF
  Json last;
  for (const Json& e : kubelet_->events()) {
    if (isEvent("devices", "rdma/vf")(e)) last = e;
  }
  EXPECT_EQ(healthyOf(last, vf), 1) << last;
  EXPECT_EQ(last["healthy"], 12) << last;  // only ens2f1's four
  EXPECT_TRUE(kubelet_->command("allocate rdma/vf " + vf)) << plugin_->log();
}

TEST_F(DpLinkIntegrationTest, PfLinkDownTakesItsVfsDown) {
  double ms = flip("ens2f1", false, idOf("ens2f1v0"));
  EXPECT_LT(ms, 1000);
  EXPECT_TRUE(kubelet_->command("wait-healthy rdma/vf 12 16 2000"));
  EXPECT_TRUE(kubelet_->command("wait-healthy rdma/shared 300 400 2000"));
  flip("ens2f1", true, idOf("ens2f1v0"));
  EXPECT_TRUE(kubelet_->command("wait-healthy rdma/vf 16 16 2000"));
}

TEST_F(DpLinkIntegrationTest, VfCountChangeShowsUpWithoutRestart) {
  // "Enable" a fifth VF on ens1f0: the function appears in sysfs and its netdev in the kernel,
  // as when sriov_numvfs grows.
  sim::SimTree tree(root_);
  PciAddress pf = PciAddress::parse(idOf("ens1f0")).value();
  PciAddress vfa = PciAddress::parse("0000:03:07.0").value();
  std::string parent = tree.dirOf(pf);
  parent = parent.substr(0, parent.rfind('/'));
  tree.addFunction(parent, {.address = vfa, .device = "101e"});
  tree.linkVf(pf, vfa, 4);
  tree.writeAttr(tree.dirOf(pf) + "/sriov_numvfs", "5");
  std::string name = prefix_ + "newvf";
  tree.addNetdev(vfa, {.name = name, .ifindex = 9999});
  tree.addRdmaDevice(vfa, {.name = "mlx5_99", .uverbs = 99, .umad = 99});
  size_t mark = kubelet_->mark();
  ASSERT_EQ(runCommand({"ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"}).rc,
            0);
  extra_links_.push_back(name);
  auto ev = kubelet_->waitEvent(
      [&](const Json& e) { return isEvent("devices", "rdma/vf")(e) && e["count"] == 17; }, 3s,
      mark);
  ASSERT_TRUE(ev) << plugin_->log();
  EXPECT_NE(healthyOf(*ev, vfa.str()), -1);
  // And "disable" it again.
  mark = kubelet_->mark();
  tree.remove("/sys/bus/pci/devices/" + vfa.str());
  tree.remove(tree.dirOf(pf) + "/virtfn4");
  tree.remove("/sys/class/net/" + name);
  tree.remove("/sys/class/infiniband/mlx5_99");
  tree.writeAttr(tree.dirOf(pf) + "/sriov_numvfs", "4");
  ASSERT_EQ(runCommand({"ip", "link", "del", name}).rc, 0);
  extra_links_.clear();
  ev = kubelet_->waitEvent(
      [&](const Json& e) { return isEvent("devices", "rdma/vf")(e) && e["count"] == 16; }, 3s,
      mark);
  ASSERT_TRUE(ev) << plugin_->log();
  EXPECT_EQ(healthyOf(*ev, vfa.str()), -1);
}

// LLDP from a real sender, Debian's lldpd, on the switch side of the simulated node's veths: the
// daemon names each port's rail by the config's rule, Allocate hands it to the container
// (PCIDEVICE_RDMA_VF_RAILS by position, the switch port in _INFO), and the rail goes when the
// switch says it is shutting down (lldpd's TTL-0 frame on SIGTERM).
TEST_F(DpLinkIntegrationTest, RailsFromARealLldpSenderReachAllocate) {
  if (::access("/usr/sbin/lldpd", X_OK) != 0) GTEST_SKIP() << "needs lldpd (install-deps.sh)";
  kubelet_.reset();
  plugin_->child().signal(SIGTERM);
  ASSERT_EQ(plugin_->child().wait(10s), 0);
  writeFile(work_ / "config.json", R"j({"resourceList": [{"resourceName": "vf"}],
      "rails": {"from": "portId", "match": "p([0-9]+)", "rail": "rail-$1"}})j");
  std::vector<std::string> args = args_;
  args.insert(args.end(), {"--config", (work_ / "config.json").string()});
  plugin_ = std::make_unique<PluginProc>(args, work_);
  kubelet_ = std::make_unique<FakeKubeletProc>(work_ / "kubelet", work_);
  ASSERT_TRUE(kubelet_->command("wait rdma/vf")) << plugin_->log();

  const std::string pa = peerOf("ens1f0"), pb = peerOf("ens2f1");
  ASSERT_FALSE(pa.empty() || pb.empty());
  // lldpd's files outside the 0700 work dir: its lldpcli, which reads the config, drops to the
  // _lldpd user and must reach the control socket.
  const fs::path ldir = fs::temp_directory_path() / ("rdmanet-lldpd-" + prefix_);
  fs::create_directories(ldir);
  writeFile(ldir / "lldpd.conf",
            "configure system hostname leaf-7\nconfigure lldp portidsubtype ifname\n"
            "configure lldp tx-interval 1\n");
  auto lldpd = std::make_unique<Child>(
      std::vector<std::string>{"/usr/sbin/ip", "netns", "exec", "rdmanet-sim-" + prefix_,
                               "/usr/sbin/lldpd", "-d", "-u", (ldir / "lldpd.sock").string(), "-O",
                               (ldir / "lldpd.conf").string(), "-I", "p*"},
      false, work_ / "lldpd.log");
  struct RemoveDir {
    fs::path p;
    ~RemoveDir() { fs::remove_all(p); }
  } remove_ldir{ldir};
  const std::string a = idOf("ens1f0v1"), b = idOf("ens2f1v0");
  // Allocates a and b until their envs satisfy `done` (each Allocate answers from the pools as
  // they are then), or 10 s.
  auto allocateUntil = [&](const std::function<bool(const Json&)>& done) {
    Json envs;
    rdmanet::testing::eventually(
        [&] {
          size_t mark = kubelet_->mark();
          EXPECT_TRUE(kubelet_->command(fmt::format("allocate rdma/vf {},{}", a, b)));
          auto ev = kubelet_->waitEvent(isEvent("allocate", "rdma/vf"), 1s, mark);
          if (ev) envs = (*ev)["responses"][0]["envs"];
          return done(envs);
        },
        10s, 200ms);  // the next frame is a second away
    return envs;
  };
  const std::string want = "rail-" + pa.substr(1) + ",rail-" + pb.substr(1);
  Json envs =
      allocateUntil([&](const Json& e) { return e.value("PCIDEVICE_RDMA_VF_RAILS", "") == want; });
  ASSERT_EQ(envs.value("PCIDEVICE_RDMA_VF_RAILS", ""), want) << envs << "\n" << plugin_->log();
  Json info = Json::parse(envs["PCIDEVICE_RDMA_VF_INFO"].get<std::string>());
  EXPECT_EQ(info[a]["rdmanet"]["switch"], "leaf-7");
  EXPECT_EQ(info[a]["rdmanet"]["switchPort"], pa);
  EXPECT_EQ(info[b]["rdmanet"]["rail"], "rail-" + pb.substr(1));
  EXPECT_TRUE(plugin_->logContains("LLDP neighbour \"leaf-7\""));

  // /metrics shows each port's neighbour (a render may be up to --metrics-max-age old), on the
  // restarted plugin's port.
  const int port = plugin_->metricsPort();
  ASSERT_GT(port, 0) << plugin_->log();
  auto neighborLine = [&](const std::string& netdev) {
    const std::string body = httpGet(port, "/metrics").second;
    const std::string head = "rdmanet_port_lldp_neighbor_info{port=\"" + prefix_ + netdev + "\",";
    const size_t at = body.find("\n" + head);
    return at == std::string::npos ? std::string()
                                   : body.substr(at + 1, body.find('\n', at + 1) - at - 1);
  };
  std::string line;
  rdmanet::testing::eventually([&] { return !(line = neighborLine("ens1f0")).empty(); }, 5s, 100ms);
  EXPECT_THAT(line, StartsWith("rdmanet_port_lldp_neighbor_info{port=\"" + prefix_ +
                               "ens1f0\",switch=\"leaf-7\",switch_chassis_id=\""));
  EXPECT_THAT(line,
              EndsWith("\",switch_port=\"" + pa + "\",rail=\"rail-" + pa.substr(1) + "\"} 1"));
  EXPECT_THAT(neighborLine("ens2f1"), HasSubstr(",switch_port=\"" + pb + "\",rail=\"rail-"));

  lldpd->signal(SIGTERM);
  EXPECT_EQ(lldpd->wait(10s), 0);
  envs = allocateUntil([](const Json& e) { return !e.contains("PCIDEVICE_RDMA_VF_RAILS"); });
  EXPECT_FALSE(envs.contains("PCIDEVICE_RDMA_VF_RAILS")) << envs;
  EXPECT_FALSE(
      Json::parse(envs["PCIDEVICE_RDMA_VF_INFO"].get<std::string>())[a].contains("rdmanet"));
  // The TTL-0 frames took the series with them.
  EXPECT_TRUE(rdmanet::testing::eventually(
      [&] { return neighborLine("ens1f0").empty() && neighborLine("ens2f1").empty(); }, 5s, 100ms));
}

}  // namespace
}  // namespace rdmanet::dp::testing
