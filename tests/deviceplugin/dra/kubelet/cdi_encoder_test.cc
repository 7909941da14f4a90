// The one CDI encoder (pools/cdi.h) as both fronts use it: the device-plugin front's pool spec
// and the DRA front's claim spec describe a device's nodes the same way, with the numbers and
// cgroup permissions runc applies.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "deviceplugin/dra/kubelet/cdi_spec.h"
#include "deviceplugin/pools/allocate.h"
#include "deviceplugin/pools/artifacts.h"
#include "deviceplugin/pools/config.h"
#include "deviceplugin/pools/pool.h"
#include "tests/deviceplugin/dra/kubelet/cdi_runtime.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json readJson(const fs::path& p) { return json::parse(sim::readFileText(p)); }

mode_t modeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

// The deviceNodes of the spec's device named `name`.
json nodesOf(const json& spec, const std::string& name) {
  for (const json& d : spec["devices"]) {
    if (d["name"] == name) return d["containerEdits"]["deviceNodes"];
  }
  ADD_FAILURE() << "no CDI device " << name;
  return json::array();
}

TEST(CdiEncoderTest, BothFrontsWriteDeviceNodesWithMajorMinorAndPermissions) {
  testing::TestNode node;
  std::vector<Pool> pools = buildPools(defaultConfig(), node.inventory());
  const Pool& pool = pools.at(0);
  const PoolDevice* dev = pool.find(node.vf(0, 1).str());
  ASSERT_NE(dev, nullptr);
  ASSERT_FALSE(dev->char_devices.empty());
  sim::TempDir tmp("cdi-encoder");

  // The device-plugin front: the pool's spec.
  ASSERT_TRUE(writeCdiSpec(tmp.path() / "dp", pool).ok());
  const fs::path dp_file = tmp.path() / "dp" / cdiSpecFileName(pool.config);
  const json dp_nodes = nodesOf(readJson(dp_file), dev->id);

  // The DRA front: a claim's spec, with the edits its render takes from buildAllocation.
  auto alloc = buildAllocation(pool, {dev->id}, {});
  ASSERT_TRUE(alloc.ok()) << alloc.error().msg;
  const fs::path dra_file = tmp.path() / "dra" / claimSpecFileName("u-1");
  ASSERT_TRUE(writeClaimCdiSpec(dra_file, {{.name = "u-1-d", .edits = *alloc}}).ok());
  const json dra_nodes = nodesOf(readJson(dra_file), "u-1-d");

  for (const json& nodes : {dp_nodes, dra_nodes}) {
    ASSERT_EQ(nodes.size(), dev->char_devices.size() + 1) << nodes.dump();
    for (const CharDevice& c : dev->char_devices) {
      ASSERT_GT(c.major, 0) << c.dev_path;
      const json want = {{"path", c.dev_path}, {"hostPath", c.dev_path}, {"type", "c"},
                         {"major", c.major},   {"minor", c.minor},       {"permissions", "rw"}};
      EXPECT_NE(std::find(nodes.begin(), nodes.end(), want), nodes.end())
          << want.dump() << " not in " << nodes.dump();
    }
    // rdma_cm's minor is dynamic (a misc device): left for the runtime to read from hostPath.
    const json rdma_cm = {{"path", "/dev/infiniband/rdma_cm"},
                          {"hostPath", "/dev/infiniband/rdma_cm"},
                          {"type", "c"},
                          {"permissions", "rw"}};
    EXPECT_NE(std::find(nodes.begin(), nodes.end(), rdma_cm), nodes.end()) << nodes.dump();
  }
  // Only the runtime, as root, reads them.
  for (const fs::path& f : {dp_file, dra_file}) {
    EXPECT_EQ(modeOf(f), 0600u) << f;
    EXPECT_EQ(modeOf(f.parent_path()), 0700u) << f;
  }
}

}  // namespace
}  // namespace rdmanet::dp
