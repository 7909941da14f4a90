// --api dra start-up: the node name and API server access are required and checked before the
// daemon starts, with a message that says what to set.
#include "deviceplugin/daemon/dra_wiring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/deviceplugin/test_node.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(DraWiringTest, WithoutANodeNameStartUpFailsNamingTheFlagAndTheVariable) {
  SteadyClock clock;
  Flags f;
  f.api = "dra";
  auto w = makeDraWiring(f, nullptr, clock);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, ErrorCode::kInvalidEnv);
  EXPECT_THAT(w.error().msg, HasSubstr("--node-name"));
  EXPECT_THAT(w.error().msg, HasSubstr("NODE_NAME"));
  w = makeDraWiring(f, "", clock);
  EXPECT_FALSE(w.ok());
}

TEST(DraWiringTest, TheNodeNameComesFromTheFlagElseTheEnvironment) {
  const fs::path dir = testing::makeTempDir("dra-wiring");
  std::ofstream(dir / "kubeconfig")
      << "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
      << "clusters: [{name: t, cluster: {server: 'http://127.0.0.1:1'}}]\n"
      << "contexts: [{name: t, context: {cluster: t, user: t}}]\nusers: [{name: t, user: {}}]\n";
  SteadyClock clock;
  Flags f;
  f.api = "dra";
  f.kubeconfig = dir / "kubeconfig";
  f.kubelet_dir = dir / "kubelet";
  auto w = makeDraWiring(f, "from-env", clock);
  ASSERT_TRUE(w.ok()) << w.error().msg;
  EXPECT_EQ(w->front->name(), "dra");
  f.node_name = "from-flag";
  w = makeDraWiring(f, "from-env", clock);
  ASSERT_TRUE(w.ok()) << w.error().msg;
  // Without a kubeconfig and outside a pod, the error says how to run outside a cluster.
  f.kubeconfig.clear();
  w = makeDraWiring(f, "n", clock);
  if (!std::getenv("KUBERNETES_SERVICE_HOST")) {
    ASSERT_FALSE(w.ok());
    EXPECT_THAT(w.error().msg, HasSubstr("--kubeconfig"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rdmanet::dp
