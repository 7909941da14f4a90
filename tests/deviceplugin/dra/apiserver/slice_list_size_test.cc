// The Kubernetes client's answer cap (kube::ClientOptions::max_response_bytes) against the
// largest answer the daemon reads of its own: the list of a 1016-VF node's ResourceSlices (the
// scaling node, 8 PFs of 127 VFs), published to the stand-in API server and listed back through
// the client at its default cap. Prints the list's size, the figure client.h quotes.
#include <gtest/gtest.h>

#include <cstdio>

#include "common/base/sysfs.h"
#include "common/kube/client.h"
#include "deviceplugin/dra/apiserver/slice_builder.h"
#include "deviceplugin/dra/apiserver/slice_devices.h"
#include "deviceplugin/pools/node_pools.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/simnode/scale_shapes.h"

namespace rdmanet::dp {
namespace {

TEST(SliceListSizeTest, A1016VfNodesSliceListIsReadAtAnEighthOfTheClientsCapAtMost) {
  rdmanet::testing::FakeApiServer api;
  if (!api.ok()) GTEST_SKIP() << api.error();
  const sim::ScaleTree& tree = sim::sharedScaleTree(sim::ScaleShape::kMlx5, 127);
  Sysfs sysfs(tree.root());
  NodePools core(sysfs, defaultConfig());
  core.rescan();
  DeviceSnapshot snap;
  snap.pools = core.build().pools;
  snap.devices = nodeDevices(snap.pools);
  const auto devices = sliceDevices(sysfs, snap, /*allow_multiple_allocations=*/false).devices;
  ASSERT_GE(devices.size(), 1016u);
  const std::string node = "node-1016";
  const std::string node_uid = api.createNode(node);
  auto slices = dra::buildSlices(devices, {.node_name = node, .node_uid = node_uid}, 1);
  ASSERT_TRUE(slices.ok()) << slices.error().msg;
  kube::KubeClient client(api.config());
  for (const auto& s : *slices) {
    auto r = client.create(dra::kResourceSlicesPath, s);
    ASSERT_TRUE(r.ok()) << r.error().msg;
  }
  auto list = client.list(dra::kResourceSlicesPath, {.field_selector = "spec.nodeName=" + node});
  ASSERT_TRUE(list.ok()) << list.error().msg;
  ASSERT_EQ((*list)["items"].size(), slices->size());
  const size_t bytes = list->dump().size();
  const size_t cap = kube::ClientOptions{}.max_response_bytes;
  std::printf("figure: slice_list_bytes_1016_vfs=%zu (%zu devices in %zu slices; cap %zu)\n", bytes,
              devices.size(), slices->size(), cap);
  RecordProperty("slice_list_bytes", static_cast<int>(bytes));
  EXPECT_LE(bytes * 8, cap) << "the cap leaves less than 8x room over the node's own list";
}

}  // namespace
}  // namespace rdmanet::dp
