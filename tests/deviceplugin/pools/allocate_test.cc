// Allocate's output (device nodes, sriov-dp envs, NCCL hints, CDI), the device-info and CDI
// files, and the ResourcePool that serves them.
#include "deviceplugin/pools/allocate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "deviceplugin/pools/artifacts.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/resource_pool.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;
using testing::TestNode;
using ::testing::UnorderedElementsAreArray;

class AllocateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { node_ = new TestNode(); }
  static void TearDownTestSuite() {
    delete node_;
    node_ = nullptr;
  }
  void SetUp() override { pools_ = buildPools(defaultConfig(), node_->inventory()); }

  Pool& vfPool() { return pools_[0]; }
  Pool& sharedPool() { return pools_[1]; }
  static std::string vf(int pf, int vf) { return node_->vf(pf, vf).str(); }
  static std::vector<std::string> expectedNodes(const PoolDevice& d) {
    std::vector<std::string> v;
    for (const auto& c : d.char_devices) v.push_back(c.dev_path);
    return v;
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  static TestNode* node_;
  std::vector<Pool> pools_;
};

TestNode* AllocateTest::node_ = nullptr;

std::vector<std::string> hostPaths(const ContainerAllocation& a) {
  std::vector<std::string> v;
  for (const auto& n : a.devices) v.push_back(n.host_path);
  return v;
}

TEST_F(AllocateTest, OneVfGetsItsCharDevicesEnvAndHints) {
  const PoolDevice& d = *vfPool().find(vf(0, 1));
  auto r = buildAllocation(vfPool(), {d.id}, {});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto want = expectedNodes(d);
  ASSERT_THAT(want, Contains(::testing::StartsWith("/dev/infiniband/uverbs")));
  ASSERT_THAT(want, Contains(::testing::StartsWith("/dev/infiniband/umad")));
  ASSERT_THAT(want, Contains(::testing::StartsWith("/dev/infiniband/issm")));
  want.push_back("/dev/infiniband/rdma_cm");
  EXPECT_THAT(hostPaths(*r), UnorderedElementsAreArray(want));
  for (const auto& n : r->devices) {
    EXPECT_EQ(n.container_path, n.host_path);
    EXPECT_EQ(n.permissions, "rw");
  }
  EXPECT_EQ(r->envs.at("PCIDEVICE_RDMA_VF"), d.id);
  auto info = nlohmann::json::parse(r->envs.at("PCIDEVICE_RDMA_VF_INFO"));
  EXPECT_EQ(info[d.id]["generic"]["deviceID"], d.id);
  EXPECT_EQ(info[d.id]["rdma"]["rdma_dev"], d.rdma_device);
  EXPECT_EQ(info[d.id]["rdma"]["rdma_cm"], "/dev/infiniband/rdma_cm");
  EXPECT_THAT(info[d.id]["rdma"]["uverbs"].get<std::string>(),
              ::testing::StartsWith("/dev/infiniband/uverbs"));
  EXPECT_EQ(r->envs.at("NCCL_IB_HCA"), "=" + d.rdma_device);
  EXPECT_EQ(r->envs.at("NCCL_NET_GDR_LEVEL"), "PIX");
  EXPECT_FALSE(r->envs.count("NCCL_IB_TC"));
  EXPECT_FALSE(r->envs.count("NCCL_IB_SL"));
  EXPECT_TRUE(r->cdi_devices.empty());
}

TEST_F(AllocateTest, PodInfoDirMountsEachDevicesDirectoryReadOnly) {
  vfPool().config.pod_info_dir = "/var/run/rdmanet/pod-info";
  const std::string a = vf(0, 0), b = vf(2, 3);
  auto r = buildAllocation(vfPool(), {a, b}, {});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_THAT(r->mounts, ElementsAre(Mount{.container_path = "/var/run/rdmanet/" + a,
                                           .host_path = "/var/run/rdmanet/pod-info/" + a},
                                     Mount{.container_path = "/var/run/rdmanet/" + b,
                                           .host_path = "/var/run/rdmanet/pod-info/" + b}));
  EXPECT_TRUE(r->mounts[0].read_only);
  EXPECT_EQ(r->envs.at("PCIDEVICE_RDMA_VF_POD_INFO"),
            "/var/run/rdmanet/" + a + ",/var/run/rdmanet/" + b);
  vfPool().config.pod_info_dir.clear();
  auto off = buildAllocation(vfPool(), {a}, {});
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->mounts.empty());
  EXPECT_FALSE(off->envs.count("PCIDEVICE_RDMA_VF_POD_INFO"));
}

TEST_F(AllocateTest, TwoVfsGetExactlyTheirNodesAndRdmaCmOnce) {
  const PoolDevice& a = *vfPool().find(vf(0, 0));
  const PoolDevice& b = *vfPool().find(vf(2, 3));
  auto r = buildAllocation(vfPool(), {a.id, b.id}, {});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto want = expectedNodes(a);
  for (auto& n : expectedNodes(b)) want.push_back(n);
  want.push_back("/dev/infiniband/rdma_cm");
  EXPECT_THAT(hostPaths(*r), UnorderedElementsAreArray(want));
  EXPECT_EQ(r->envs.at("PCIDEVICE_RDMA_VF"), a.id + "," + b.id);
  EXPECT_EQ(r->envs.at("NCCL_IB_HCA"), "=" + a.rdma_device + "," + b.rdma_device);
  // Another VF's char devices are not handed out.
  for (auto& n : expectedNodes(*vfPool().find(vf(0, 2)))) {
    EXPECT_THAT(hostPaths(*r), Not(Contains(n)));
  }
}

TEST_F(AllocateTest, LosslessGivesTrafficClassAndServiceLevel) {
  vfPool().config.lossless = Lossless{.priority = 3, .dscp = 26};
  auto r = buildAllocation(vfPool(), {vf(1, 0)}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->envs.at("NCCL_IB_TC"), "104");  // DSCP 26 << 2
  EXPECT_EQ(r->envs.at("NCCL_IB_SL"), "3");
}

TEST_F(AllocateTest, NoGdrLevelWhenAGpuIsFartherThanPxb) {
  for (auto& d : vfPool().devices) d.gpu_distance = Distance::kPhb;
  auto r = buildAllocation(vfPool(), {vf(1, 0)}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->envs.count("NCCL_NET_GDR_LEVEL"));
  vfPool().devices[0].gpu_distance = Distance::kPxb;
  EXPECT_EQ(gdrLevel({&vfPool().devices[0]}), "PXB");
}

TEST_F(AllocateTest, CdiNamesDevicesInsteadOfDeviceNodes) {
  auto r = buildAllocation(vfPool(), {vf(0, 0), vf(0, 1)}, {.cdi = true});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->devices.empty());
  EXPECT_THAT(r->cdi_devices, ElementsAre("rdma/vf=" + vf(0, 0), "rdma/vf=" + vf(0, 1)));
  EXPECT_TRUE(r->envs.count("PCIDEVICE_RDMA_VF_INFO"));
}

TEST_F(AllocateTest, SharedSlotsNameTheirPfOnce) {
  std::string pf = node_->pf(1).str();
  auto r = buildAllocation(sharedPool(), {pf + "-3", pf + "-7"}, {});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->envs.at("PCIDEVICE_RDMA_SHARED"), pf);
  const PoolDevice& d = *sharedPool().find(pf + "-3");
  EXPECT_EQ(r->envs.at("NCCL_IB_HCA"), "=" + d.rdma_device);
  auto want = expectedNodes(d);
  want.push_back("/dev/infiniband/rdma_cm");
  EXPECT_THAT(hostPaths(*r), UnorderedElementsAreArray(want));
}

TEST_F(AllocateTest, BadRequestsGetDistinctErrors) {
  vfPool().devices[0].healthy = false;
  std::string sick = vfPool().devices[0].id;
  struct Case {
    std::vector<std::string> ids;
    ErrorCode code;
  };
  const std::vector<Case> cases = {
      {{}, ErrorCode::kInvalidConfig},
      {{"../../etc/passwd"}, ErrorCode::kInvalidConfig},
      {{"bad id with spaces"}, ErrorCode::kInvalidConfig},
      {{std::string(64, 'a')}, ErrorCode::kInvalidConfig},
      {{std::string("\xff\xfe", 2)}, ErrorCode::kInvalidConfig},
      {{vf(0, 1), vf(0, 1)}, ErrorCode::kInvalidConfig},
      {{"0000:ff:1f.7"}, ErrorCode::kDeviceNotFound},
      {{vf(0, 1), "mlx5_0"}, ErrorCode::kDeviceNotFound},
      {{sick}, ErrorCode::kTryAgainLater},
  };
  for (const Case& c : cases) {
    auto r = buildAllocation(vfPool(), c.ids, {});
    ASSERT_FALSE(r.ok()) << ::testing::PrintToString(c.ids);
    EXPECT_EQ(r.error().code, c.code) << r.error().msg;
  }
}

TEST_F(AllocateTest, EnvNameFollowsSriovDevicePlugin) {
  PoolConfig c{.resource_prefix = "nvidia.com", .resource_name = "mlnx-rdma.a"};
  EXPECT_EQ(envName(c), "PCIDEVICE_NVIDIA_COM_MLNX_RDMA_A");
}

TEST_F(AllocateTest, ResourcePoolWritesDeviceInfoAndCdiSpec) {
  fs::path dir = testing::makeTempDir("artifacts");
  rdmanet::testing::FakeClock clock;
  ResourcePool rp(vfPool(), {.devinfo_dir = dir / "devinfo", .cdi_dir = dir / "cdi", .cdi = true},
                  nullptr, clock);
  std::string id = vf(0, 2);
  fs::path info = dir / "devinfo" / ("rdma-vf-" + id + "-device.json");
  ASSERT_TRUE(fs::exists(info));
  fs::remove(info);  // Allocate re-creates what went missing
  auto r = rp.allocate({{id}});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto j = nlohmann::json::parse(slurp(info));
  EXPECT_EQ(j["type"], "pci");
  EXPECT_EQ(j["version"], "1.1.0");
  EXPECT_EQ(j["pci"]["pci-address"], id);
  EXPECT_EQ(j["pci"]["pf-pci-address"], node_->pf(0).str());
  EXPECT_EQ(j["pci"]["rdma-device"], vfPool().find(id)->rdma_device);
  EXPECT_EQ(fs::status(info).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  auto spec = nlohmann::json::parse(slurp(dir / "cdi" / "rdmanet-rdma-vf.json"));
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");
  EXPECT_EQ(spec["kind"], "rdma/vf");
  ASSERT_EQ(spec["devices"].size(), 16u);
  auto dev = std::find_if(spec["devices"].begin(), spec["devices"].end(),
                          [&](const auto& d) { return d["name"] == id; });
  ASSERT_NE(dev, spec["devices"].end());
  EXPECT_EQ((*dev)["containerEdits"]["deviceNodes"].size(),
            vfPool().find(id)->char_devices.size() + 1);
  // No temp files left behind by the atomic writes.
  for (const auto& e : fs::directory_iterator(dir / "cdi")) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".")) << e.path();
  }
  fs::remove_all(dir);
}

TEST_F(AllocateTest, ResourcePoolVersionMovesOnlyOnChange) {
  Metrics metrics;
  rdmanet::testing::FakeClock clock;
  ResourcePool rp(vfPool(), {}, &metrics, clock);
  auto s0 = rp.snapshot();
  EXPECT_FALSE(rp.setDevices(s0.devices));
  EXPECT_FALSE(rp.waitNewer(s0.version, std::chrono::milliseconds(1)).has_value());
  auto devs = s0.devices;
  devs[3].healthy = false;
  EXPECT_TRUE(rp.setDevices(devs));
  auto s1 = rp.waitNewer(s0.version, std::chrono::milliseconds(1));
  ASSERT_TRUE(s1.has_value());
  EXPECT_FALSE(s1->devices[3].healthy);
  EXPECT_THAT(metrics.render(),
              ::testing::HasSubstr(
                  "rdmanet_dp_health_transitions_total{resource=\"rdma/vf\",to=\"unhealthy\"} 1"));
  EXPECT_THAT(
      metrics.render(),
      ::testing::HasSubstr("rdmanet_dp_devices{resource=\"rdma/vf\",health=\"healthy\"} 15"));
  rp.stop();
  EXPECT_FALSE(rp.waitNewer(0, std::chrono::seconds(5)).has_value());
}

TEST_F(AllocateTest, ResourcePoolAllocateIsAllOrNothing) {
  Metrics metrics;
  rdmanet::testing::FakeClock clock;
  ResourcePool rp(vfPool(), {}, &metrics, clock);
  auto r = rp.allocate({{vf(0, 0)}, {"0000:ff:1f.7"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_FALSE(rp.allocate({}).ok());
  auto ok = rp.allocate({{vf(0, 0)}, {vf(0, 1)}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_THAT(
      metrics.render(),
      ::testing::HasSubstr("rdmanet_dp_allocations_total{resource=\"rdma/vf\",result=\"ok\"} 2"));
}

}  // namespace
}  // namespace rdmanet::dp
