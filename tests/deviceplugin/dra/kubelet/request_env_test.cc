// requestEnv over hand-made pools: one pool is exactly buildAllocation's env; pools merged as
// request_env.h says (HCAs joined, per-pool names kept, disagreeing NCCL_IB_TC/SL left out,
// GPUDirect level over all devices).
#include "deviceplugin/dra/kubelet/request_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "deviceplugin/pools/allocate.h"

namespace rdmanet::dp {
namespace {

PoolDevice fn(const char* pci, const char* hca, Distance gpu) {
  const PciAddress a = *PciAddress::parse(pci);
  return {.id = a.str(), .pci = a, .rdma_device = hca, .gpu_distance = gpu};
}

Pool pool(const char* name, std::optional<Lossless> lossless, std::vector<PoolDevice> devs) {
  return {.config = {.resource_name = name, .lossless = lossless}, .devices = std::move(devs)};
}

// The snapshot's DRA devices over its pools, looked up by PCI address.
struct Snapshot {
  DeviceSnapshot inv;
  std::vector<ResolvedDevice> pick(const std::vector<std::string>& ids) const {
    std::vector<ResolvedDevice> out;
    for (const auto& id : ids) {
      for (const NodeDevice& d : inv.devices) {
        if (d.device.id != id) continue;
        auto r = resolveDevice(inv, d);
        EXPECT_TRUE(r.ok()) << r.error().msg;
        if (r.ok()) out.push_back(*r);
      }
    }
    return out;
  }
};

Snapshot snapshot(std::vector<Pool> pools) {
  Snapshot s;
  s.inv.devices = nodeDevices(pools);
  s.inv.pools = std::move(pools);
  return s;
}

TEST(RequestEnvTest, OnePoolIsTheDevicePluginsEnvForAllTheDevices) {
  const Snapshot s = snapshot({pool("a", Lossless{.priority = 3, .dscp = 26},
                                    {fn("0000:17:00.2", "mlx5_2", Distance::kPix),
                                     fn("0000:17:00.3", "mlx5_3", Distance::kPxb)})});
  auto env = requestEnv(s.pick({"0000:17:00.2", "0000:17:00.3"}));
  ASSERT_TRUE(env.ok()) << env.error().msg;
  auto direct = buildAllocation(s.inv.pools[0], {"0000:17:00.2", "0000:17:00.3"}, {});
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(*env, direct->envs);
  EXPECT_EQ(env->at("PCIDEVICE_RDMA_A"), "0000:17:00.2,0000:17:00.3");
  EXPECT_EQ(env->at("NCCL_IB_HCA"), "=mlx5_2,mlx5_3");
}

TEST(RequestEnvTest, PoolsAreMergedNameByName) {
  const Snapshot s = snapshot({pool("a", Lossless{.priority = 3, .dscp = 26},
                                    {fn("0000:17:00.2", "mlx5_2", Distance::kPix)}),
                               pool("b", Lossless{.priority = 3, .dscp = 24},
                                    {fn("0000:65:00.2", "mlx5_7", Distance::kPxb)})});
  auto env = requestEnv(s.pick({"0000:17:00.2", "0000:65:00.2"}));
  ASSERT_TRUE(env.ok()) << env.error().msg;
  EXPECT_EQ(env->at("PCIDEVICE_RDMA_A"), "0000:17:00.2");
  EXPECT_EQ(env->at("PCIDEVICE_RDMA_B"), "0000:65:00.2");
  EXPECT_EQ(env->at("NCCL_IB_HCA"), "=mlx5_2,mlx5_7");
  EXPECT_EQ(env->at("NCCL_IB_SL"), "3");            // agreed
  EXPECT_EQ(env->count("NCCL_IB_TC"), 0u);          // 104 vs 96: neither is right for both
  EXPECT_EQ(env->at("NCCL_NET_GDR_LEVEL"), "PXB");  // the farther one
}

TEST(RequestEnvTest, ADeviceFarFromAGpuDropsTheGpuDirectHintForTheRequest) {
  const Snapshot s = snapshot({pool("a", {}, {fn("0000:17:00.2", "mlx5_2", Distance::kPix)}),
                               pool("b", {}, {fn("0000:65:00.2", "mlx5_7", Distance::kSys)})});
  auto env = requestEnv(s.pick({"0000:17:00.2", "0000:65:00.2"}));
  ASSERT_TRUE(env.ok()) << env.error().msg;
  EXPECT_EQ(env->count("NCCL_NET_GDR_LEVEL"), 0u);
  auto one = requestEnv(s.pick({"0000:17:00.2"}));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->at("NCCL_NET_GDR_LEVEL"), "PIX");
}

TEST(RequestEnvTest, AnUnhealthyDeviceFailsTheRequest) {
  PoolDevice sick = fn("0000:17:00.2", "mlx5_2", Distance::kPix);
  sick.healthy = false;
  const Snapshot s = snapshot({pool("a", {}, {sick})});
  auto env = requestEnv(s.pick({"0000:17:00.2"}));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().code, ErrorCode::kTryAgainLater);
}

}  // namespace
}  // namespace rdmanet::dp
