#include "tests/simnode/build_node.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/base/sysfs.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::sim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultTopology = RDMANET_SOURCE_DIR "/hack/topologies/default.json";

uint16_t le16(const std::vector<uint8_t>& c, size_t off) {
  return static_cast<uint16_t>(c[off] | (c[off + 1] << 8));
}
uint32_t le32(const std::vector<uint8_t>& c, size_t off) {
  return le16(c, off) | (static_cast<uint32_t>(le16(c, off + 2)) << 16);
}

// Walks the extended capability list the way a reader of config space does.
std::optional<size_t> findExtCap(const std::vector<uint8_t>& c, uint16_t id) {
  size_t off = 0x100;
  for (int guard = 0; off >= 0x100 && off + 4 <= c.size() && guard < 64; ++guard) {
    const uint32_t h = le32(c, off);
    if ((h & 0xffff) == id) return off;
    off = h >> 20;
    if (off == 0) break;
  }
  return std::nullopt;
}

std::vector<uint8_t> readConfig(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(BridgeConfigTest, DownstreamPortHasAcsWithRedirectFlag) {
  for (bool redirect : {false, true}) {
    const auto c = bridgeConfigSpace({.address = pci("0000:02:01.0"),
                                      .kind = BridgeKind::kSwitchDownstream,
                                      .secondary_bus = 4,
                                      .subordinate_bus = 4,
                                      .acs_redirect = redirect});
    ASSERT_EQ(c.size(), 4096u);
    EXPECT_EQ(c[0x0e], 0x01) << "type-1 header";
    EXPECT_EQ(le16(c, 0x06) & 0x10, 0x10) << "capability list bit";
    EXPECT_EQ(c[0x19], 4);
    // Classic list: PCI Express capability with port type 6 (downstream).
    const uint8_t cap = c[0x34];
    EXPECT_EQ(c[cap], 0x10);
    EXPECT_EQ((le16(c, cap + 2) >> 4) & 0xf, 0x6);
    const auto acs = findExtCap(c, 0x000d);
    ASSERT_TRUE(acs.has_value());
    EXPECT_EQ(*acs, kAcsCapOffset);
    EXPECT_EQ(le16(c, *acs + 4) & 0x0c, 0x0c) << "RR and CR supported";
    EXPECT_EQ((le16(c, *acs + 6) & 0x0c) != 0, redirect);
  }
}

TEST(BridgeConfigTest, UpstreamPortHasNoAcs) {
  const auto c =
      bridgeConfigSpace({.address = pci("0000:01:00.0"), .kind = BridgeKind::kSwitchUpstream});
  EXPECT_EQ((le16(c, c[0x34] + 2) >> 4) & 0xf, 0x5);
  EXPECT_TRUE(findExtCap(c, 0x0001).has_value());
  EXPECT_FALSE(findExtCap(c, 0x000d).has_value());
}

TEST(TopologyModelTest, RejectsUnknownKeysAndBadValues) {
  struct Case {
    const char* json;
    ErrorCode code;
    const char* mentions;
  };
  for (const auto& c : std::vector<Case>{
           {"{", ErrorCode::kDecodeFailure, ""},
           {R"({"host_bridges": 3})", ErrorCode::kInvalidConfig, "host_bridges"},
           {R"({"host_bridges": [], "bogus": 1})", ErrorCode::kInvalidConfig, "bogus"},
           {R"({"host_bridges": [{"bus": "zz"}]})", ErrorCode::kInvalidConfig, "bus"},
           {R"({"host_bridges": [{"root_ports": [{"nic": {"ports": 0}}]}]})",
            ErrorCode::kInvalidConfig, "ports"},
           {R"({"host_bridges": [{"root_ports": [{"nic": {"mtu": "big"}}]}]})",
            ErrorCode::kInvalidConfig, "mtu"},
           {R"({"host_bridges": [{"root_ports": [{"nic": {}, "gpu": {}}]}]})",
            ErrorCode::kInvalidConfig, "at most one"},
       }) {
    auto t = parseTopology(c.json);
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_EQ(t.error().code, c.code) << c.json;
    EXPECT_NE(t.error().msg.find(c.mentions), std::string::npos) << t.error().msg;
  }
}

TEST(BuildNodeTest, TooLongNetdevNameIsRejected) {
  TempDir dir;
  SimTree tree(dir.path());
  auto t = parseTopology(R"({"ifprefix": "abcdefgh",
      "host_bridges": [{"root_ports": [{"nic": {"name": "ens1"}}]}]})");
  ASSERT_TRUE(t.ok());
  auto built = buildNode(*t, tree);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.error().code, ErrorCode::kInvalidConfig);
}

TEST(BuildNodeTest, DefaultTopologyHasTheRealShape) {
  TempDir dir;
  SimTree tree(dir.path());
  auto t = loadTopology(kDefaultTopology);
  ASSERT_TRUE(t.ok()) << t.error().msg;
  auto built = buildNode(*t, tree);
  ASSERT_TRUE(built.ok()) << built.error().msg;
  EXPECT_EQ(built->nics.size(), 2u);
  EXPECT_EQ(built->gpus.size(), 4u);
  EXPECT_EQ(built->netdevs.size(), 20u);
  EXPECT_EQ(built->rdma_devices.size(), 20u);
  EXPECT_EQ(built->nics[1].numa_node, 1);

  auto link = [&](const char* p) { return fs::read_symlink(tree.host(p)).string(); };
  EXPECT_EQ(link("/sys/bus/pci/devices/0000:03:00.0"),
            "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
  EXPECT_EQ(link("/sys/bus/pci/devices/0000:03:00.0/virtfn0"), "../0000:03:00.2");
  EXPECT_EQ(link("/sys/bus/pci/devices/0000:03:00.2/physfn"), "../0000:03:00.0");
  EXPECT_EQ(link("/sys/bus/pci/devices/0000:03:00.0/driver"),
            "../../../../../../bus/pci/drivers/mlx5_core");
  EXPECT_EQ(link("/sys/class/net/ens1f0"),
            "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/net/"
            "ens1f0");
  EXPECT_EQ(link("/sys/class/net/ens1f0/device"), "../../../0000:03:00.0");
  EXPECT_EQ(link("/sys/class/infiniband/mlx5_0/device"), "../../../0000:03:00.0");

  const Sysfs s(dir.path());
  EXPECT_EQ(s.read("/sys/bus/pci/devices/0000:03:00.0/sriov_totalvfs").value(), "8");
  EXPECT_EQ(s.read("/sys/bus/pci/devices/0000:03:00.0/sriov_numvfs").value(), "4");
  EXPECT_EQ(s.read("/sys/bus/pci/devices/0000:04:00.0/class").value(), "0x030200");
  EXPECT_EQ(s.read("/sys/class/infiniband_verbs/uverbs0/ibdev").value(), "mlx5_0");
  EXPECT_EQ(s.read("/sys/class/infiniband_verbs/uverbs0/dev").value(), "231:192");
  EXPECT_EQ(s.read("/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/1").value(), "RoCE v2");
  EXPECT_EQ(readConfig(tree.host("/sys/bus/pci/devices/0000:02:00.0/config")).size(), 4096u);
}

TEST(BuildNodeTest, AcsRedirectFlagReachesTheBridgeConfig) {
  TempDir dir;
  SimTree tree(dir.path());
  auto t = parseTopology(R"({"host_bridges": [{"bus": "0x20", "root_ports": [
      {"switch": {"acs_redirect": true, "downstream": [{"gpu": {}}, {"gpu": {}}]}}]}]})");
  ASSERT_TRUE(t.ok()) << t.error().msg;
  ASSERT_TRUE(buildNode(*t, tree).ok());
  // Root port 20:01.0 -> upstream 21:00.0 -> downstream 22:00.0 / 22:01.0.
  const auto rp = readConfig(tree.host("/sys/bus/pci/devices/0000:20:01.0/config"));
  const auto ds = readConfig(tree.host("/sys/bus/pci/devices/0000:22:01.0/config"));
  EXPECT_EQ(le16(rp, kAcsCapOffset + 6), 0);
  EXPECT_EQ(le16(ds, kAcsCapOffset + 6) & 0x0c, 0x0c);
  EXPECT_EQ(ds[0x19], 0x24) << "secondary bus of the second downstream port";
}

TEST(BuildNodeTest, SetNetdevIdentityRewritesGidsFromMac) {
  TempDir dir;
  SimTree tree(dir.path());
  auto t = loadTopology(kDefaultTopology);
  auto built = buildNode(*t, tree);
  ASSERT_TRUE(built.ok());
  const BuiltNetdev& nd = built->netdevs[0];
  setNetdevIdentity(tree, nd, 77, "0c:42:a1:01:02:03");
  const Sysfs s(dir.path());
  EXPECT_EQ(s.read("/sys/class/net/" + nd.name + "/ifindex").value(), "77");
  EXPECT_EQ(s.read("/sys/class/infiniband/" + nd.rdma + "/ports/1/gids/1").value(),
            "fe80:0000:0000:0000:0e42:a1ff:fe01:0203");
  EXPECT_EQ(s.read("/sys/class/infiniband/" + nd.rdma + "/node_guid").value(),
            "0e42:a1ff:fe01:0203");
}

}  // namespace
}  // namespace rdmanet::sim
