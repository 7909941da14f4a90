// RdmaVerbs' pure parts: the RoCE MTU the kernel derives from a netdev MTU (iboe_get_mtu in
// include/rdma/ib_addr.h), IB speed/width arithmetic, the sysfs `rate` and GID type spellings
// (drivers/infiniband/core/sysfs.c), the sysfs fallback on a fake tree, and rdmaFacts()
// choosing verbs when it answers and sysfs with the reason when it does not.
#include "common/rdma/rdma_verbs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>

#include "tests/fakes/fake_rdma_verbs.h"
#include "tests/simnode/sim_tree.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet {
namespace {

using ::testing::HasSubstr;

TEST(RoceMtuTest, LargestIbMtuBelowNetdevMtuMinusHeaders) {
  EXPECT_EQ(roceMtuForNetdevMtu(9000), 4096);
  EXPECT_EQ(roceMtuForNetdevMtu(1500), 1024);
  EXPECT_EQ(roceMtuForNetdevMtu(4200), 4096);  // 4200 - 96 = 4104
  EXPECT_EQ(roceMtuForNetdevMtu(4191), 2048);  // 4095 after headers
  EXPECT_EQ(roceMtuForNetdevMtu(2144), 2048);
  EXPECT_EQ(roceMtuForNetdevMtu(2143), 1024);
  EXPECT_EQ(roceMtuForNetdevMtu(352), 256);
  EXPECT_EQ(roceMtuForNetdevMtu(351), 0);  // RoCE not usable
}

TEST(RoceMtuTest, PortMaxMtuCaps) {
  EXPECT_EQ(roceMtuForNetdevMtu(9000, 2048), 2048);
  EXPECT_EQ(roceMtuForNetdevMtu(1500, 4096), 1024);
}

TEST(RoceMtuTest, IbMtuEnumToBytes) {
  EXPECT_EQ(ibMtuBytes(1), 256);
  EXPECT_EQ(ibMtuBytes(3), 1024);
  EXPECT_EQ(ibMtuBytes(5), 4096);
  EXPECT_EQ(ibMtuBytes(0), 0);
  EXPECT_EQ(ibMtuBytes(6), 0);
}

TEST(RateTest, SpeedTimesLanes) {
  EXPECT_DOUBLE_EQ(ibSpeedGbps(32) * ibWidthLanes(2), 100.0);  // 4X EDR
  EXPECT_DOUBLE_EQ(ibSpeedGbps(64) * ibWidthLanes(2), 200.0);  // 4X HDR
  EXPECT_DOUBLE_EQ(ibSpeedGbps(1) * ibWidthLanes(1), 2.5);     // 1X SDR (rxe on a slow link)
  EXPECT_EQ(ibWidthLanes(3), 0);
  EXPECT_EQ(ibSpeedGbps(3), 0);
}

TEST(RateTest, ParsesTheSysfsRateLine) {
  EXPECT_EQ(parseRateGbps("100 Gb/sec (4X EDR)"), 100.0);
  EXPECT_EQ(parseRateGbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(parseRateGbps("garbage"), std::nullopt);
  EXPECT_EQ(parseRateGbps(" Gb/sec"), std::nullopt);
}

TEST(GidTypeTest, KernelSpellings) {
  EXPECT_EQ(parseGidType("RoCE v2"), GidType::kRoceV2);
  EXPECT_EQ(parseGidType("IB/RoCE v1"), GidType::kRoceV1);
  EXPECT_EQ(parseGidType(""), GidType::kUnknown);
  EXPECT_EQ(gidTypeName(GidType::kRoceV2), "RoCE v2");
  EXPECT_EQ(gidTypeName(GidType::kRoceV1), "IB/RoCE v1");
}

class FactsTest : public ::testing::Test {
 protected:
  FactsTest() : tree_(dir_.path()) {
    auto rc = tree_.addHostBridge(0, 0x80);
    auto rp = tree_.addBridge(
        rc, {.address = sim::pci("0000:80:01.0"), .kind = sim::BridgeKind::kRootPort});
    tree_.addFunction(rp, {.address = sim::pci("0000:81:00.0"), .driver = "mlx5_core"});
    tree_.addNetdev(sim::pci("0000:81:00.0"), {.name = "ens1f0", .ifindex = 10});
    tree_.addRdmaDevice(sim::pci("0000:81:00.0"),
                        {.name = "mlx5_0",
                         .ports = {{.gids = {{.index = 0,
                                              .gid = "fe80:0000:0000:0000:0e42:a1ff:fe00:0000",
                                              .type = "IB/RoCE v1",
                                              .ndev = "ens1f0"},
                                             {.index = 1,
                                              .gid = "fe80:0000:0000:0000:0e42:a1ff:fe00:0000",
                                              .type = "RoCE v2",
                                              .ndev = "ens1f0"}}}},
                         .uverbs = 0});
    tree_.writeAttr("/sys/class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)");
  }
  RdmaDevice device() {
    auto d = readRdmaDevice(Sysfs(dir_.path()), "mlx5_0");
    EXPECT_TRUE(d.ok());
    return d.ok() ? *d : RdmaDevice{};
  }
  sim::TempDir dir_;
  sim::SimTree tree_;
};

TEST_F(FactsTest, SysfsFallbackHasStateGidsAndRateButNoActiveMtu) {
  const DeviceFacts f = factsFromSysfs(Sysfs(dir_.path()), device());
  EXPECT_EQ(f.source, FactSource::kSysfs);
  ASSERT_EQ(f.ports.size(), 1u);
  const PortFacts& p = f.ports[0];
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.state_num, 4);
  EXPECT_EQ(p.link_layer, "Ethernet");
  EXPECT_EQ(p.active_mtu, 0);
  EXPECT_EQ(p.rate, "200 Gb/sec (4X HDR)");
  EXPECT_DOUBLE_EQ(p.rate_gbps, 200.0);
  ASSERT_EQ(p.gids.size(), 2u);
  EXPECT_EQ(p.gids[0].type, GidType::kRoceV1);
  EXPECT_EQ(p.gids[1].type, GidType::kRoceV2);
  EXPECT_EQ(p.gids[1].ndev, "ens1f0");
}

TEST_F(FactsTest, VerbsAnswerWins) {
  FakeRdmaVerbs verbs;
  DeviceFacts v{.name = "mlx5_0"};
  v.ports.push_back(PortFacts{.num = 1, .state = "ACTIVE", .state_num = 4, .active_mtu = 4096});
  verbs.set(v);
  const DeviceFacts f = rdmaFacts(&verbs, Sysfs(dir_.path()), device());
  EXPECT_EQ(f.source, FactSource::kVerbs);
  EXPECT_EQ(f.ports[0].active_mtu, 4096);
  EXPECT_EQ(verbs.queries(), 1);
}

TEST_F(FactsTest, VerbsErrorFallsBackWithTheReason) {
  FakeRdmaVerbs verbs;
  verbs.failOpen("mlx5_0", EACCES);
  const DeviceFacts f = rdmaFacts(&verbs, Sysfs(dir_.path()), device());
  EXPECT_EQ(f.source, FactSource::kSysfs);
  EXPECT_THAT(f.fallback_reason, HasSubstr("ibv_open_device(mlx5_0)"));
  EXPECT_THAT(f.fallback_reason, HasSubstr("Permission denied"));
  EXPECT_EQ(f.ports[0].state, "ACTIVE");
}

TEST_F(FactsTest, DeviceVerbsDoesNotListFallsBack) {
  FakeRdmaVerbs verbs;
  const DeviceFacts f = rdmaFacts(&verbs, Sysfs(dir_.path()), device());
  EXPECT_EQ(f.source, FactSource::kSysfs);
  EXPECT_THAT(f.fallback_reason, HasSubstr("not listed by libibverbs"));
}

TEST_F(FactsTest, NoVerbsSaysSo) {
  const DeviceFacts f = rdmaFacts(nullptr, Sysfs(dir_.path()), device());
  EXPECT_EQ(f.fallback_reason, "no verbs access");
}

}  // namespace
}  // namespace rdmanet
