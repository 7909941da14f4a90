// A port's LLDP neighbour and rail as attributes of its devices' slice entries
// (rdmanet.io/rail, switchName, switchChassisId, switchPortId), accepted by the stand-in API
// server, which validates resource.k8s.io/v1 slices; a value longer than the API allows is left
// out, not cut.
#include <gtest/gtest.h>

#include "common/base/sysfs.h"
#include "common/kube/client.h"
#include "deviceplugin/dra/apiserver/slice_builder.h"
#include "deviceplugin/dra/apiserver/slice_devices.h"
#include "deviceplugin/pools/node_pools.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_apiserver.h"

namespace rdmanet::dp {
namespace {

using testing::TestNode;

const dra::DraDevice& find(const std::vector<dra::DraDevice>& devs, const PciAddress& pci) {
  for (const auto& d : devs) {
    if (d.name == dra::pciDeviceName(pci)) return d;
  }
  ADD_FAILURE() << "no device " << pci.str();
  static const dra::DraDevice none;
  return none;
}

std::string str(const dra::DraDevice& d, const std::string& key) {
  auto it = d.attributes.find(key);
  if (it == d.attributes.end()) return "(absent)";
  return std::get<std::string>(it->second);
}

TEST(SliceRailTest, APortsNeighbourAndRailAreAttributesTheApiServerTakes) {
  TestNode node;
  Sysfs sysfs(node.root());
  NodePools core(sysfs, defaultConfig());
  core.rescan();
  core.setNeighbors({{node.pfNetdev(0),
                      {.chassis_id = "0c:42:a1:00:00:01",
                       .chassis_id_subtype = 4,
                       .port_id = "Ethernet1/7",
                       .port_id_subtype = 5,
                       .ttl_seconds = 120,
                       .system_name = "leaf-1"}},
                     // A chassis ID longer than an attribute may be (64): left out.
                     {node.pfNetdev(1),
                      {.chassis_id = std::string(65, 'c'),
                       .chassis_id_subtype = 7,
                       .port_id = "Ethernet2/7",
                       .port_id_subtype = 5,
                       .ttl_seconds = 120,
                       .system_name = "leaf-2"}}});
  DeviceSnapshot snap;
  snap.pools = core.build().pools;
  snap.devices = nodeDevices(snap.pools);
  int skipped = -1;
  const auto devices = sliceDevices(sysfs, snap, false, &skipped).devices;
  EXPECT_EQ(skipped, 0);

  const dra::DraDevice& vf = find(devices, node.vf(0, 2));
  EXPECT_EQ(str(vf, "rdmanet.io/rail"), "leaf-1");
  EXPECT_EQ(str(vf, "rdmanet.io/switchName"), "leaf-1");
  EXPECT_EQ(str(vf, "rdmanet.io/switchChassisId"), "0c:42:a1:00:00:01");
  EXPECT_EQ(str(vf, "rdmanet.io/switchPortId"), "Ethernet1/7");
  const dra::DraDevice& pf = find(devices, node.pf(0));  // the shared pool's PF
  EXPECT_EQ(str(pf, "rdmanet.io/rail"), "leaf-1");
  const dra::DraDevice& long_id = find(devices, node.vf(1, 0));
  EXPECT_EQ(str(long_id, "rdmanet.io/switchChassisId"), "(absent)");
  EXPECT_EQ(str(long_id, "rdmanet.io/rail"), "leaf-2");
  const dra::DraDevice& none = find(devices, node.vf(2, 0));
  EXPECT_EQ(str(none, "rdmanet.io/rail"), "(absent)");
  EXPECT_EQ(str(none, "rdmanet.io/switchName"), "(absent)");

  rdmanet::testing::FakeApiServer api;
  if (!api.ok()) GTEST_SKIP() << api.error();
  const std::string uid = api.createNode("node-rails");
  auto slices = dra::buildSlices(devices, {.node_name = "node-rails", .node_uid = uid}, 1);
  ASSERT_TRUE(slices.ok()) << slices.error().msg;
  kube::KubeClient client(api.config());
  for (const auto& s : *slices) {
    auto r = client.create(dra::kResourceSlicesPath, s);
    ASSERT_TRUE(r.ok()) << r.error().msg;
  }
}

}  // namespace
}  // namespace rdmanet::dp
