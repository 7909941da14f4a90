// The DRA front's plain parts: which DRA devices the pools give, which allocation results of a
// claim are ours, and the prepared-claims checkpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <utility>

#include "common/kube/names.h"
#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "deviceplugin/dra/kubelet/claim_allocation.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"
#include "deviceplugin/dra/kubelet/claim_render.h"
#include "deviceplugin/dra/node_devices.h"
#include "tests/deviceplugin/dra/decoded_claim.h"
#include "tests/deviceplugin/dra/kubelet/cdi_runtime.h"
#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::TestNode;

TEST(DraDevicesTest, OneDevicePerVfAndEachSharedPfOnce) {
  TestNode node;
  auto devs = nodeDevices(buildPools(defaultConfig(), node.inventory()));
  // rdma/vf: 4 PFs x 4 VFs; rdma/shared: the 4 PFs, once each (not once per slot).
  ASSERT_EQ(devs.size(), 20u);
  for (const auto& d : devs) {
    EXPECT_TRUE(kube::isDnsLabel(d.name)) << d.name;
    EXPECT_EQ(d.name, dra::pciDeviceName(d.device.pci));
  }
  DeviceSnapshot inv{.devices = devs};
  const NodeDevice* vf = inv.find(dra::pciDeviceName(node.vf(1, 2)));
  ASSERT_NE(vf, nullptr);
  EXPECT_EQ(vf->pool, "rdma/vf");
  EXPECT_FALSE(vf->shareable);
  EXPECT_EQ(vf->device.id, node.vf(1, 2).str());
  const NodeDevice* pf = inv.find(dra::pciDeviceName(node.pf(1)));
  ASSERT_NE(pf, nullptr);
  EXPECT_EQ(pf->pool, "rdma/shared");
  EXPECT_TRUE(pf->shareable);
  EXPECT_EQ(pf->device.id, sharedSlotId(node.pf(1), 0));
  EXPECT_EQ(inv.find("pci-0000-99-00-0"), nullptr);
}

TEST(DraDevicesTest, AFunctionInTwoPoolsIsPublishedByTheFirst) {
  // A PF without VFs can be a whole-function device of a vf pool and the PF of a shared pool.
  const PciAddress pf = *PciAddress::parse("0000:17:00.0");
  Pool whole{.config = {.resource_name = "whole"}, .devices = {{.id = pf.str(), .pci = pf}}};
  Pool shared{
      .config = {.resource_name = "shared", .mode = PoolMode::kShared},
      .devices = {{.id = sharedSlotId(pf, 0), .pci = pf}, {.id = sharedSlotId(pf, 1), .pci = pf}}};
  std::vector<std::string> dups;
  auto devs = nodeDevices({whole, shared}, &dups);
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].pool, "rdma/whole");
  EXPECT_EQ(dups, std::vector<std::string>{"pci-0000-17-00-0"});  // once, not once per slot
  dups.clear();
  devs = nodeDevices({shared}, &dups);
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_TRUE(dups.empty());
}

json claim(const std::string& uid, json results) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", "c"}, {"namespace", "ns"}, {"uid", uid}}},
          {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
}
json result(const std::string& request, const std::string& driver, const std::string& pool,
            const std::string& device) {
  return {{"request", request}, {"driver", driver}, {"pool", pool}, {"device", device}};
}
const ClaimRef kRef{.ns = "ns", .uid = "u-1", .name = "c"};

// ourAllocation over the claim as prepare reads it: decoded first, a document that does not
// decode being the error.
Result<std::vector<AllocatedDevice>> ourAllocationOf(const json& doc, const ClaimRef& ref,
                                                     const std::string& driver,
                                                     const std::string& node) {
  auto claim = kube::decodeResourceClaim(doc);
  if (!claim.ok()) return claim.error();
  return ourAllocation(*claim, ref, driver, node);
}

TEST(ClaimAllocationTest, TakesOnlyThisDriversResultsOnThisNode) {
  auto r =
      ourAllocationOf(claim("u-1", {result("gpu", "gpu.nvidia.com", "node-a", "gpu-0"),
                                    result("nic", "rdma.rdmanet.io", "node-a", "0000-17-00-2"),
                                    result("nic", "rdma.rdmanet.io", "node-b", "0000-17-00-3")}),
                      kRef, "rdma.rdmanet.io", "node-a");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].request, "nic");
  EXPECT_EQ((*r)[0].device, "0000-17-00-2");
}

TEST(ClaimAllocationTest, EachWayOfNotBeingOursIsAnErrorThatSaysWhy) {
  struct Case {
    json claim;
    std::string msg;
  };
  const json ours = {result("nic", "rdma.rdmanet.io", "node-a", "0000-17-00-2")};
  for (const Case& c : {
           Case{claim("u-2", ours), "has UID u-2, kubelet asked for u-1"},
           Case{claim("u-1", {result("nic", "other.example.com", "node-a", "x")}),
                "no device of driver rdma.rdmanet.io in pool node-a (1 result(s) of other drivers"},
           Case{claim("u-1", {result("nic", "rdma.rdmanet.io", "node-b", "x")}),
                "(0 result(s) of other drivers, 1 of other pools)"},
           Case{claim("u-1", {result("nic", "rdma.rdmanet.io", "node-a", "../etc")}),
                "malformed device name"},
           Case{claim("u-1", {result("nic/a/b", "rdma.rdmanet.io", "node-a", "x")}),
                "malformed request name"},
           Case{claim("u-1", {result("Nic", "rdma.rdmanet.io", "node-a", "x")}),
                "malformed request name"},
           Case{json{{"metadata", {{"uid", "u-1"}}}}, "is not allocated"},
           Case{json{{"metadata", json::object()},
                     {"status", {{"allocation", {{"devices", {{"results", ours}}}}}}}},
                "has UID <none>"},
           Case{json::array(), "\"ResourceClaim\" must be an object"},
           Case{claim("u-1", {{{"request", "nic"}, {"driver", "rdma.rdmanet.io"}, {"pool", 7}}}),
                "\"status.allocation.devices.results[0].pool\" must be a string"},
           Case{claim("u-1", {{{"request", "nic"}, {"driver", "rdma.rdmanet.io"}}}),
                "\"status.allocation.devices.results[0].pool\" is required"},
       }) {
    auto r = ourAllocationOf(c.claim, kRef, "rdma.rdmanet.io", "node-a");
    ASSERT_FALSE(r.ok()) << c.msg;
    EXPECT_THAT(r.error().msg, HasSubstr(c.msg));
  }
}

TEST(ClaimAllocationTest, ASubrequestKeepsItsFullNameAndBelongsToItsRequest) {
  auto r = ourAllocationOf(claim("u-1", {result("nic/fast", "rdma.rdmanet.io", "node-a", "d-1")}),
                           kRef, "rdma.rdmanet.io", "node-a");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ((*r)[0].request, "nic/fast");
  EXPECT_EQ(baseRequest("nic/fast"), "nic");
  EXPECT_EQ(baseRequest("nic"), "nic");
}

TEST(ClaimAllocationTest, ClaimUidsThatCouldEscapeAFileNameAreRejected) {
  EXPECT_TRUE(isValidClaimUid("0f3c9a5e-1b2d-4c3e-9f00-123456789abc"));
  for (const char* bad : {"", "../x", "a/b", "a b", "a.json"}) EXPECT_FALSE(isValidClaimUid(bad));
  EXPECT_FALSE(isValidClaimUid(std::string(64, 'a')));
}

TEST(CdiSpecTest, DeviceAndRequestDevicesAreNamedApartAndMountsAreReadOnlyBinds) {
  EXPECT_EQ(deviceCdiName("u-1", "pci-0000-17-00-2"), "u-1-pci-0000-17-00-2");
  EXPECT_EQ(requestCdiName("u-1", "nic"), "u-1_nic");
  const json spec = claimCdiSpec(
      {{.name = "u-1-pci-0000-17-00-2",
        .edits = {.devices = {{.container_path = "/dev/infiniband/uverbs2",
                               .host_path = "/dev/infiniband/uverbs2",
                               .permissions = "rw"}},
                  .mounts = {{.container_path = "/var/run/rdmanet/0000:17:00.2",
                              .host_path = "/run/pod-info/0000:17:00.2"}}}},
       {.name = "u-1_nic", .edits = {.envs = {{"PCIDEVICE_RDMA_VF", "0000:17:00.2"}}}}});
  ASSERT_EQ(spec["devices"].size(), 2u);
  const json& mount = spec["devices"][0]["containerEdits"]["mounts"][0];
  EXPECT_EQ(mount["hostPath"], "/run/pod-info/0000:17:00.2");
  EXPECT_EQ(mount["options"], json::array({"bind", "ro"}));
  EXPECT_EQ(spec["devices"][0]["containerEdits"]["env"], json::array());
  EXPECT_EQ(spec["devices"][1]["containerEdits"]["env"],
            json::array({"PCIDEVICE_RDMA_VF=0000:17:00.2"}));
  EXPECT_FALSE(spec["devices"][1]["containerEdits"].contains("mounts"));
}

TEST(CdiSpecTest, WritingASpecMakesItsMountSourcesSoTheContainerStartsBeforeAnyCniAdd) {
  // A real cluster: a DRA pod whose CNI ADD had not filled <podInfoDir>/<PCI> (no rdmanet
  // network, or a Multus that cannot resolve the claim) failed to start, "stat
  // /var/run/rdmanet/pod-info/<PCI>: no such file or directory".
  const fs::path dir = fs::temp_directory_path() / ("cdi-mounts-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path source = dir / "run" / "pod-info" / "0000:17:00.2";
  ASSERT_TRUE(writeClaimCdiSpec(dir / "cdi" / claimSpecFileName("u-1"),
                                {{.name = "u-1-pci-0000-17-00-2",
                                  .edits = {.mounts = {{.container_path = "/var/run/rdmanet/x",
                                                        .host_path = source.string()}}}}})
                  .ok());
  const testing::ContainerView seen =
      testing::applyCdi(dir / "cdi", {"rdmanet.io/rdma=u-1-pci-0000-17-00-2"});
  EXPECT_TRUE(seen.unresolved.empty());
  EXPECT_TRUE(seen.missing_mount_sources.empty()) << seen.missing_mount_sources.front();
  struct stat st {};
  ASSERT_EQ(::stat(source.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  // A source that exists as a file is refused, not written through.
  fs::remove(source);
  std::ofstream(source.string()) << "x";
  EXPECT_FALSE(writeClaimCdiSpec(dir / "cdi" / claimSpecFileName("u-2"),
                                 {{.name = "u-2-d",
                                   .edits = {.mounts = {{.container_path = "/var/run/rdmanet/x",
                                                         .host_path = source.string()}}}}})
                   .ok());
  EXPECT_FALSE(fs::exists(dir / "cdi" / claimSpecFileName("u-2")));
  fs::remove_all(dir);
}

TEST(ClaimCheckpointTest, SurvivesAReloadAndIsPrivate) {
  const fs::path dir = testing::makeTempDir("dra-ckpt");
  const fs::path file = dir / "checkpoint.json";
  {
    ClaimCheckpoint c(file);
    ASSERT_TRUE(c.load().ok());  // missing: empty
    PreparedClaim p{.ref = kRef, .cdi_spec = dir / "spec.json"};
    p.devices.push_back({.request_names = {"nic"},
                         .pool_name = "node-a",
                         .device_name = "0000-17-00-2",
                         .cdi_device_ids = {"rdmanet.io/rdma=u-1-0000-17-00-2"}});
    ASSERT_TRUE(c.put(p).ok());
    ASSERT_TRUE(c.put({.ref = {.ns = "ns", .uid = "u-2", .name = "d"}}).ok());
    ASSERT_TRUE(c.erase("u-2").ok());
  }
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ClaimCheckpoint again(file);
  ASSERT_TRUE(again.load().ok());
  ASSERT_EQ(again.claims().size(), 1u);
  const PreparedClaim* p = again.find("u-1");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->ref.name, "c");
  EXPECT_EQ(p->cdi_spec, dir / "spec.json");
  ASSERT_EQ(p->devices.size(), 1u);
  EXPECT_EQ(p->devices[0].cdi_device_ids[0], "rdmanet.io/rdma=u-1-0000-17-00-2");
  fs::remove_all(dir);
}

TEST(ClaimCheckpointTest, KeepsWhatTheDeviceMetadataIsRenderedFrom) {
  const fs::path dir = testing::makeTempDir("dra-ckpt-meta");
  const fs::path file = dir / "checkpoint.json";
  PreparedClaim p{.ref = kRef,
                  .cdi_spec = dir / "spec.json",
                  .device_metadata = true,
                  .pod_claim_name = "rdma"};
  p.devices.push_back({.request_names = {"nic"},
                       .pool_name = "node-a",
                       .device_name = "0000-17-00-2",
                       .subrequest = "fast"});
  {
    ClaimCheckpoint c(file);
    ASSERT_TRUE(c.load().ok());
    ASSERT_TRUE(c.put(p).ok());
    ASSERT_TRUE(c.put({.ref = {.ns = "ns", .uid = "u-2", .name = "d"}}).ok());
  }
  ClaimCheckpoint again(file);
  ASSERT_TRUE(again.load().ok());
  const PreparedClaim* got = again.find("u-1");
  ASSERT_NE(got, nullptr);
  EXPECT_TRUE(got->device_metadata);
  EXPECT_EQ(got->pod_claim_name, "rdma");
  EXPECT_EQ(got->devices, p.devices);
  // The allocation it was rendered from names the subrequest again.
  ASSERT_EQ(allocationOf(*got).size(), 1u);
  EXPECT_EQ(allocationOf(*got)[0].request, "nic/fast");
  // A claim without them (and an older checkpoint's) has none.
  const PreparedClaim* plain = again.find("u-2");
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(plain->device_metadata);
  EXPECT_FALSE(plain->pod_claim_name.has_value());
  fs::remove_all(dir);
}

TEST(ClaimCheckpointTest, AnUnreadableCheckpointIsAnErrorNotAnEmptyOne) {
  const fs::path dir = testing::makeTempDir("dra-ckpt");
  std::ofstream(dir / "checkpoint.json") << "{\"version\": 1, \"claims\": {\"u\": {}}}";
  ClaimCheckpoint c(dir / "checkpoint.json");
  EXPECT_FALSE(c.load().ok());
  std::ofstream(dir / "checkpoint.json") << "not json";
  EXPECT_FALSE(c.load().ok());
  fs::remove_all(dir);
}

TEST(ClaimAllocationTest, AnAdminAccessResultIsMarkedAsSuch) {
  json c = claim("u-1", {result("nic", "rdma.rdmanet.io", "node-a", "0000-17-00-2"),
                         result("mon", "rdma.rdmanet.io", "node-a", "0000-17-00-3")});
  c["status"]["allocation"]["devices"]["results"][1]["adminAccess"] = true;
  auto r = ourAllocationOf(c, kRef, "rdma.rdmanet.io", "node-a");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_FALSE((*r)[0].admin_access);
  EXPECT_TRUE((*r)[1].admin_access);
}

// Issue 32 §3: what the scheduler took of a shared PF's rdmanet.io/bandwidth is the claim's share,
// in Mbit/s rounded up (never below what was granted), at least 1.
TEST(ClaimAllocationTest, TheConsumedBandwidthIsTheResultsShareInMbps) {
  const std::pair<const char*, int64_t> cases[] = {
      {"50G", 50'000}, {"100G", 100'000}, {"1500001", 2}, {"1M", 1}, {"1", 1}, {"0", 1}};
  for (const auto& [quantity, mbps] : cases) {
    json c = claim("u-1", {result("nic", "rdma.rdmanet.io", "node-a", "pci-0000-17-00-0")});
    c["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"] = {
        {"rdmanet.io/bandwidth", quantity}, {"example.com/other", "7"}};
    auto r = ourAllocationOf(c, kRef, "rdma.rdmanet.io", "node-a");
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ((*r)[0].bandwidth_mbps, mbps) << quantity;
  }
  json other = claim("u-1", {result("nic", "rdma.rdmanet.io", "node-a", "pci-0000-17-00-0")});
  other["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"] = {
      {"example.com/other", "7"}};
  auto none = ourAllocationOf(other, kRef, "rdma.rdmanet.io", "node-a");
  ASSERT_TRUE(none.ok()) << none.error().msg;
  EXPECT_EQ((*none)[0].bandwidth_mbps, std::nullopt);
  other["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"] = {
      {"rdmanet.io/bandwidth", "-1G"}};
  auto negative = ourAllocationOf(other, kRef, "rdma.rdmanet.io", "node-a");
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.error().msg, HasSubstr("negative rdmanet.io/bandwidth consumed"));
}

// A shared PF that one request holds twice took its share twice; the checkpoint keeps the sum, so
// the records written again after a reboot say the same.
TEST(ClaimRenderTest, ASharedDevicesConsumedBandwidthIsItsPreparedShare) {
  TestNode node;
  DeviceSnapshot inv{.pools = buildPools(defaultConfig(), node.inventory())};
  inv.devices = nodeDevices(inv.pools);
  const std::string pf = dra::pciDeviceName(node.pf(1));
  const RenderOptions opts{.driver = "rdma.rdmanet.io", .node = "node-a", .cdi_dir = "/run/cdi"};
  auto r = renderClaim(kRef,
                       {{.request = "nic", .device = pf, .bandwidth_mbps = 25'000},
                        {.request = "nic", .device = pf, .bandwidth_mbps = 5'000},
                        {.request = "mon", .device = pf}},
                       inv, opts);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  ASSERT_EQ(r->prepared.devices.size(), 2u);
  EXPECT_EQ(r->prepared.devices[0].request_names, std::vector<std::string>{"nic"});
  EXPECT_EQ(r->prepared.devices[0].max_tx_rate_mbps, 30'000);
  EXPECT_EQ(r->prepared.devices[1].max_tx_rate_mbps, std::nullopt);
  const auto again = allocationOf(r->prepared);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].bandwidth_mbps, 30'000);

  const fs::path dir = testing::makeTempDir("dra-ckpt");
  {
    ClaimCheckpoint c(dir / "checkpoint.json");
    ASSERT_TRUE(c.load().ok());
    ASSERT_TRUE(c.put(r->prepared).ok());
  }
  ClaimCheckpoint reread(dir / "checkpoint.json");
  ASSERT_TRUE(reread.load().ok());
  ASSERT_NE(reread.find("u-1"), nullptr);
  EXPECT_EQ(reread.find("u-1")->devices, r->prepared.devices);
  // A share that is no positive integer makes the checkpoint unreadable, as any wrong field does.
  std::ofstream(dir / "checkpoint.json")
      << R"({"version": 1, "claims": {"u-1": {"namespace": "ns", "name": "c", "cdiSpec": "/s",)"
      << R"( "devices": [{"requestNames": ["nic"], "poolName": "node-a", "deviceName": "d",)"
      << R"( "cdiDeviceIDs": [], "maxTxRateMbps": "fast"}]}}})";
  auto bad = reread.load();
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().msg, HasSubstr("maxTxRateMbps"));
  fs::remove_all(dir);
}

// Admin access (a monitoring pod's view of a device another pod may hold) brings the device's
// char devices, but not the pod-info dir the CNI fills for the pod it attaches the device to.
TEST(ClaimRenderTest, AnAdminAccessResultGetsItsDeviceNodesButNoPodInfo) {
  TestNode node;
  PluginConfig cfg = defaultConfig();
  for (PoolConfig& p : cfg.pools) {
    if (p.mode == PoolMode::kVf) p.pod_info_dir = "/run/rdmanet/pod-info";
  }
  DeviceSnapshot inv{.pools = buildPools(cfg, node.inventory())};
  inv.devices = nodeDevices(inv.pools);
  const std::string dev = dra::pciDeviceName(node.vf(0, 1));
  const RenderOptions opts{.driver = "rdma.rdmanet.io", .node = "node-a", .cdi_dir = "/run/cdi"};
  auto normal = renderClaim(kRef, {{.request = "nic", .device = dev}}, inv, opts);
  auto admin =
      renderClaim(kRef, {{.request = "nic", .device = dev, .admin_access = true}}, inv, opts);
  ASSERT_TRUE(normal.ok()) << normal.error().msg;
  ASSERT_TRUE(admin.ok()) << admin.error().msg;
  ASSERT_EQ(normal->cdi.size(), 2u);  // the device's, and the request's env
  ASSERT_EQ(admin->cdi.size(), 2u);
  EXPECT_FALSE(normal->cdi[0].edits.mounts.empty()) << "the pool has a podInfoDir";
  EXPECT_TRUE(admin->cdi[0].edits.mounts.empty());
  EXPECT_EQ(admin->cdi[0].edits.devices, normal->cdi[0].edits.devices);
  auto podInfoEnv = [](const RenderedClaim& r) {
    return std::count_if(r.cdi[1].edits.envs.begin(), r.cdi[1].edits.envs.end(),
                         [](const auto& kv) { return kv.first.ends_with("_POD_INFO"); });
  };
  EXPECT_EQ(podInfoEnv(*normal), 1);
  EXPECT_EQ(podInfoEnv(*admin), 0);
  EXPECT_EQ(admin->cdi[1].edits.envs.at("PCIDEVICE_RDMA_VF"), node.vf(0, 1).str());
  ASSERT_EQ(admin->prepared.devices.size(), 1u);
  EXPECT_TRUE(admin->prepared.devices[0].admin_access);
  // The checkpoint keeps it, so a spec rendered again after a reboot is the same.
  EXPECT_TRUE(allocationOf(admin->prepared)[0].admin_access);
}

}  // namespace
}  // namespace rdmanet::dp
