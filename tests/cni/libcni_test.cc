// rdmanet driven through libcni (label integration): the Go client under libcni_client/ is
// built at test time from Debian's golang-go and golang-github-appc-cni-dev, offline, and run
// like a container runtime: ADD/CHECK/DEL, result caching, and a conflist chaining rdmanet
// with the reference `tuning` plugin.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/cni/cni_binary.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::cni::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* kGoSrc = "/usr/share/gocode/src/github.com/containernetworking/cni/libcni";

class LibcniTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    client_dir_ = new sim::TempDir("rdmanet-libcni");
    if (sh("which go") != 0 || !fs::exists(kGoSrc)) return;
    const std::string dir = client_dir_->path().string();
    // GOPATH mode against Debian's source tree: no network, no module cache, no go.sum.
    const std::string cmd = "cd " + dir +
                            " && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=" + dir +
                            "/cache GOFLAGS= HOME=" + dir + " go build -o " + dir +
                            "/libcni_client " + RDMANET_LIBCNI_CLIENT_SRC;
    built_ = sh(cmd) == 0;
  }
  static void TearDownTestSuite() {
    delete client_dir_;
    client_dir_ = nullptr;
  }

  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!built_)
      GTEST_SKIP() << "libcni client not built: go or golang-github-appc-cni-dev missing";
    tag_ = "l" + std::to_string(::getpid() % 100000);
    ns_ = "rdmanet-" + tag_;
    ASSERT_EQ(sh("ip netns add " + ns_), 0);
    master_ = tag_ + "m";
    ASSERT_EQ(sh("ip link add " + master_ + " type veth peer name " + tag_ + "p"), 0);
    ASSERT_EQ(sh("ip link set " + master_ + " up && ip link set " + tag_ + "p up"), 0);
  }
  void TearDown() override {
    if (!ns_.empty()) sh("ip netns del " + ns_);
    if (!master_.empty()) sh("ip link del " + master_);
  }

  std::string writeConf(const std::string& name, const std::string& text) {
    const fs::path p = tmp_.path() / name;
    std::ofstream(p) << text;
    return p.string();
  }
  BinaryRun run(const std::string& op, const std::string& conf, const std::string& cid) {
    const std::string cmd = "CNI_PATH=" + binaryDir() +
                            ":/usr/lib/cni RDMANET_STATE_DIR=" + (tmp_.path() / "state").string() +
                            " " + (client_dir_->path() / "libcni_client").string() + " " + op +
                            " " + conf + " " + cid + " /var/run/netns/" + ns_ + " net1 " +
                            (tmp_.path() / "cache").string();
    BinaryRun r;
    r.out = shOut(cmd + "; echo \"rc=$?\"");
    const size_t rc = r.out.rfind("rc=");
    r.exit_code = std::stoi(r.out.substr(rc + 3));
    r.out = r.out.substr(0, rc);
    auto j = parseJson(r.out);
    if (j.ok()) r.doc = *j;
    return r;
  }
  std::string macvlan() const {
    return R"({"type": "rdmanet", "master": ")" + master_ + R"(", "mode": "bridge",
      "ipam": {"type": "host-local", "subnet": "10.88.0.0/24", "dataDir": ")" +
           (tmp_.path() / "ipam").string() + R"("}})";
  }

  static inline sim::TempDir* client_dir_ = nullptr;
  static inline bool built_ = false;
  sim::TempDir tmp_{"rdmanet-libcni-run"};
  std::string tag_, ns_, master_;
};

TEST_F(LibcniTest, AddCheckDelThroughLibcniWithResultCaching) {
  const std::string conf = writeConf(
      "net.conflist", R"({"cniVersion": "1.0.0", "name": "rdma", "plugins": [)" + macvlan() + "]}");
  const BinaryRun add = run("add", conf, "c1");
  ASSERT_EQ(add.exit_code, 0) << add.out;
  EXPECT_EQ(add.doc["interfaces"][0]["name"], "net1");
  EXPECT_EQ(add.doc["ips"][0]["address"], "10.88.0.2/24");

  const BinaryRun cached = run("cached", conf, "c1");
  ASSERT_EQ(cached.exit_code, 0) << cached.out;
  EXPECT_EQ(cached.doc["ips"], add.doc["ips"]);
  EXPECT_EQ(cached.doc["interfaces"], add.doc["interfaces"]);

  const BinaryRun check = run("check", conf, "c1");
  EXPECT_EQ(check.exit_code, 0) << check.out;
  // Break the interface: CHECK through libcni must now report it.
  ASSERT_EQ(sh("ip -n " + ns_ + " addr flush dev net1"), 0);
  const BinaryRun broken = run("check", conf, "c1");
  EXPECT_NE(broken.exit_code, 0);
  EXPECT_NE(broken.out.find("10.88.0.2/24"), std::string::npos) << broken.out;

  const BinaryRun del = run("del", conf, "c1");
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_NE(sh("ip -n " + ns_ + " link show net1"), 0);
  const BinaryRun gone = run("cached", conf, "c1");
  EXPECT_TRUE(gone.doc.is_object() && !gone.doc.contains("ips")) << gone.out;
  EXPECT_EQ(run("del", conf, "c1").exit_code, 0);  // DEL again, without a cached result
}

TEST_F(LibcniTest, ChainedWithTheReferenceTuningPlugin) {
  const std::string conf =
      writeConf("chain.conflist", R"({"cniVersion": "1.0.0", "name": "rdma-chain", "plugins": [)" +
                                      macvlan() + R"(, {"type": "tuning", "mtu": 1300,
        "sysctl": {"net.ipv4.conf.net1.arp_notify": "1"}}]})");
  const BinaryRun add = run("add", conf, "c2");
  ASSERT_EQ(add.exit_code, 0) << add.out;
  EXPECT_NE(shOut("ip -n " + ns_ + " link show net1").find("mtu 1300"), std::string::npos);
  EXPECT_EQ(shOut("ip netns exec " + ns_ + " sysctl -n net.ipv4.conf.net1.arp_notify"), "1\n");
  const BinaryRun check = run("check", conf, "c2");
  EXPECT_EQ(check.exit_code, 0) << check.out;
  const BinaryRun del = run("del", conf, "c2");
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_NE(sh("ip -n " + ns_ + " link show net1"), 0);
}

TEST_F(LibcniTest, ASingleConfAndEveryOlderVersion) {
  for (const char* v : {"0.3.1", "0.4.0"}) {
    const std::string conf =
        writeConf(std::string("v") + v + ".conf", R"({"cniVersion": ")" + std::string(v) +
                                                      R"(", "name": "rdma-)" + v + "\", " +
                                                      macvlan().substr(1));
    const BinaryRun add = run("add", conf, "c3");
    ASSERT_EQ(add.exit_code, 0) << v << ": " << add.out;
    EXPECT_EQ(add.doc["ips"][0]["version"], "4") << v;
    if (std::string(v) != "0.3.1") {
      EXPECT_EQ(run("check", conf, "c3").exit_code, 0) << v;
    }
    EXPECT_EQ(run("del", conf, "c3").exit_code, 0) << v;
  }
}

}  // namespace
}  // namespace rdmanet::cni::testing
